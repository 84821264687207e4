// From what a trace says of each collective to the ring model's inputs: the group size (the
// trace's 'Group size'; else the config's step graph for a group it names; else, for a trace that
// names no group, the world: c10d's default process group, as distributedInfo.world_size states
// it), S in bytes (elements × dtype size; an all-gather's gathered output), each assumption kept
// once (src/words/ words it as a note), and each collective that cannot be resolved counted with
// the field it lacks.

import { DTYPE_BYTES, type CommInfo } from './calibrate_comms';
import type { CollectiveSample } from './calibrate_fit';
import { type LeftOutTally, MAX_RANK, type RawCollective } from './calibrate_kineto';

/**
 * A group size the trace does not record, and where it came from: the config's step graph
 * (`config`), or the world (`world`: distributedInfo.world_size, for a trace that names no group).
 */
export interface SizeAssumption {
  readonly group: string;
  readonly n: number;
  readonly from: 'config' | 'world';
}

export interface Resolved {
  readonly samples: CollectiveSample[];
  readonly notes: SizeAssumption[];
}

const NO_SIZE =
  "it carries no size: no 'In msg nelems' / 'Out msg nelems' in the kernel's args or its " +
  "record_param_comms, and no nccl:<collective> op with 'Input Dims' around its launch";
const NO_DTYPE =
  "it has element counts but no 'dtype' (kernel args, record_param_comms) or 'Input type' (nccl:* op)";
const badDtype = (d: string) =>
  `its 'dtype' is ${JSON.stringify(d)}, not one of [${[...DTYPE_BYTES.keys()].join(', ')}]`;

/** The S of the ring model, or the reason it cannot be had. */
function ringBytes(c: RawCollective, n: number): number | string {
  const i: CommInfo = c.info;
  if (i.ringBytes !== undefined) return i.ringBytes;
  if (i.inNel === undefined && i.outNel === undefined) return NO_SIZE;
  if (i.dtype === undefined) return NO_DTYPE;
  const size = DTYPE_BYTES.get(i.dtype);
  if (size === undefined) return badDtype(i.dtype);
  // all-gather: S is the gathered output; reduce-scatter and all-reduce: the full input
  if (c.kind === 'all_gather') return (i.outNel ?? i.inNel! * n) * size;
  if (c.kind === 'reduce_scatter') return (i.inNel ?? i.outNel! * n) * size;
  return (i.inNel ?? i.outNel!) * size;
}

/** Group name → its size in the config's step graph (its collectives'), for traces that record no size. */
export type ConfigGroups = ReadonlyMap<string, number>;

interface SizeSource {
  readonly n?: number;
  readonly note?: SizeAssumption;
}

function groupSizeOf(i: CommInfo, group: string, cfg: ConfigGroups, world?: number): SizeSource {
  if (i.groupSize !== undefined) return { n: i.groupSize };
  const fromCfg = cfg.get(group);
  if (i.group !== undefined && fromCfg !== undefined)
    return { n: fromCfg, note: { group, n: fromCfg, from: 'config' } };
  if (i.group === undefined && world !== undefined)
    return { n: world, note: { group: 'default', n: world, from: 'world' } };
  return {};
}

function noGroupSize(group: string, named: boolean, world?: number): string {
  if (named)
    return `no 'Group size' in its kernel's or record_param_comms' args, and the config has no group '${group}'`;
  const noWorld = world === undefined ? ', and no distributedInfo.world_size' : '';
  return `no 'Group size' or 'Process Group Name' in the trace${noWorld}`;
}

/** Why a group size (a whole number ≥ 0) cannot be fitted, or undefined when it can. */
function groupSizeProblem(n: number, worldSize: number | undefined): string | undefined {
  const most = worldSize ?? MAX_RANK + 1;
  if (n < 1) return "its 'Group size' is 0: a collective runs on one rank at least";
  const limit = worldSize === undefined ? `the ${most} ranks a trace can name` : `the trace's world_size (${most})`;
  if (n > most) return `its 'Group size' is ${n}, more than ${limit}`;
  if (n === 1) return 'it runs on one rank and moves nothing';
  return undefined;
}

/** The ring model's inputs of every collective that has them; the rest into `left`, with the reason. */
export function resolveCollectives(
  raw: readonly RawCollective[],
  cfg: ConfigGroups,
  worldSize: number | undefined,
  left: LeftOutTally,
): Resolved {
  const samples: CollectiveSample[] = [];
  const notes = new Map<string, SizeAssumption>();
  for (const c of raw) {
    const group = c.info.group ?? 'default';
    if (c.info.bad !== undefined) {
      left.add(c.kind, group, `its ${c.info.bad}`);
      continue;
    }
    const src = groupSizeOf(c.info, group, cfg, worldSize);
    if (src.n === undefined) {
      left.add(c.kind, group, noGroupSize(group, c.info.group !== undefined, worldSize));
      continue;
    }
    const wrong = groupSizeProblem(src.n, worldSize);
    if (wrong !== undefined) {
      left.add(c.kind, group, wrong);
      continue;
    }
    const bytes = ringBytes(c, src.n);
    if (typeof bytes === 'string') left.add(c.kind, group, bytes);
    else if (!(bytes >= 0 && Number.isFinite(bytes)))
      left.add(c.kind, group, `its size (${bytes} B) is not a finite number ≥ 0`);
    else if (!(c.durUs > 0)) left.add(c.kind, group, 'its kernel has no duration');
    else {
      if (src.note) notes.set(`${src.note.from}|${src.note.group}|${src.note.n}`, src.note);
      samples.push({ rank: c.rank, name: c.name, kind: c.kind, group, groupSize: src.n, bytes, durUs: c.durUs });
    }
  }
  return { samples, notes: [...notes.values()] };
}
