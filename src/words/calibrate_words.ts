// The words of a calibration: each group size the fit assumed where the trace was silent
// (pipeline/calibrate_resolve.ts SizeAssumption), and why a collective or a group was left out of
// the fit (pipeline/calibrate_reasons.ts LeftOutReason), each in one sentence naming the trace's
// fields; the CLI (text and --json) and the calibration panel say the same.

import {
  type Calibration,
  TRACE_DTYPE_BYTES,
  type KindCount,
  type LeftOutReason,
  type SizeAssumption,
  type Unfitted,
} from '../pipeline';
import { formatDuration, sizeText } from '../util';

export function assumptionText(a: SizeAssumption): string {
  if (a.from === 'config') return `group '${a.group}': no 'Group size' in the trace, n = ${a.n} from the config`;
  return (
    `group '${a.group}': the trace records no process group or 'Group size'; taken as the world ` +
    `(distributedInfo.world_size = ${a.n}), c10d's default process group`
  );
}

/** Why a collective, or a group, was left out: one clause, after `group 'x' (kinds): `. */
export function leftOutText(r: LeftOutReason): string {
  switch (r.code) {
    case 'no_ring':
      return (
        'no ring model for it here (the fit covers all-gather, reduce-scatter and all-reduce; NCCL runs ' +
        'all-to-all, send / recv and broadcast as point-to-point kernels)'
      );
    case 'bad_count':
      return `its '${r.field}' is ${r.value}, not a whole number in [0, 2^53)`;
    case 'unknown_group':
      return `no 'Group size' in its kernel's or record_param_comms' args, and the config has no group '${r.group}'`;
    case 'no_group': {
      const world = r.world ? '' : ', and no distributedInfo.world_size';
      return `no 'Group size' or 'Process Group Name' in the trace${world}`;
    }
    case 'group_size_zero':
      return "its 'Group size' is 0: a collective runs on one rank at least";
    case 'group_size_over': {
      const limit = r.world ? `the trace's world_size (${r.most})` : `the ${r.most} ranks a trace can name`;
      return `its 'Group size' is ${r.n}, more than ${limit}`;
    }
    case 'one_rank':
      return 'it runs on one rank and moves nothing';
    case 'no_size':
      return (
        "it carries no size: no 'In msg nelems' / 'Out msg nelems' in the kernel's args or its " +
        "record_param_comms, and no nccl:<collective> op with 'Input Dims' around its launch"
      );
    case 'no_dtype':
      return "it has element counts but no 'dtype' (kernel args, record_param_comms) or 'Input type' (nccl:* op)";
    case 'bad_dtype':
      return `its 'dtype' is ${JSON.stringify(r.dtype)}, not one of [${[...TRACE_DTYPE_BYTES.keys()].join(', ')}]`;
    case 'bad_bytes':
      return `its size (${r.bytes} B) is not a finite number ≥ 0`;
    case 'no_duration':
      return 'its kernel has no duration';
    case 'one_size':
      return (
        `its ${r.samples} collective(s) all move ${sizeText(r.bytes)}: with one size α and β ` +
        'cannot be told apart; profile steps with collectives of different sizes'
      );
    case 'singular':
      return 'its collectives give a singular fit (sizes too close)';
    case 'no_growth':
      return (
        `their durations do not grow with size (${sizeText(r.lo.bytes)} took ${formatDuration(r.lo.durUs)}, ` +
        `${sizeText(r.hi.bytes)} ${formatDuration(r.hi.durUs)}), so no positive bandwidth fits; a collective ` +
        "kernel's time includes its wait for the slowest rank: profile steps where ranks arrive together"
      );
  }
}

/** 'all_reduce ×8, all_gather ×4' */
const kindsText = (kinds: readonly KindCount[]): string => kinds.map((k) => `${k.kind} ×${k.count}`).join(', ');

/** One sentence per group or kernels left out: `group 'x' (all_reduce ×8, n = 128): reason`. */
export function unfittedText(u: Unfitted): string {
  const n = u.groupSize === undefined ? '' : `, n = ${u.groupSize}`;
  return `group '${u.group}' (${kindsText(u.kinds)}${n}): ${leftOutText(u.reason)}`;
}

/** A calibration as `calibrate --json` gives it: kinds, reasons and notes as text. */
export const wordedCalibration = (c: Calibration) => ({
  ...c,
  unfitted: c.unfitted.map((u) => ({ ...u, kinds: kindsText(u.kinds), reason: leftOutText(u.reason) })),
  notes: c.notes.map(assumptionText),
});
