// From what a trace says of each collective to the ring model's inputs: the group size (the
// trace's 'Group size'; else the config's step graph for a group it names; else, for a trace that
// names no group, the world: c10d's default process group, as distributedInfo.world_size states
// it), S in bytes (elements × dtype size; an all-gather's gathered output), each assumption kept
// once (src/words/ words it as a note), and each collective that cannot be resolved counted with
// the field it lacks.

import { TRACE_DTYPE_BYTES, type CommInfo } from './calibrate_comms';
import type { CollectiveSample } from './calibrate_fit';
import { type LeftOutTally, MAX_RANK, type RawCollective } from './calibrate_kineto';
import type { LeftOutReason } from './calibrate_reasons';

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

/** The S of the ring model, or the reason it cannot be had. */
function ringBytes(c: RawCollective, n: number): number | LeftOutReason {
  const i: CommInfo = c.info;
  if (i.ringBytes !== undefined) return i.ringBytes;
  if (i.inNel === undefined && i.outNel === undefined) return { code: 'no_size' };
  if (i.dtype === undefined) return { code: 'no_dtype' };
  const size = TRACE_DTYPE_BYTES.get(i.dtype);
  if (size === undefined) return { code: 'bad_dtype', dtype: i.dtype };
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

function noGroupSize(group: string, named: boolean, world?: number): LeftOutReason {
  return named ? { code: 'unknown_group', group } : { code: 'no_group', world: world !== undefined };
}

/** Why a group size (a whole number ≥ 0) cannot be fitted, or undefined when it can. */
function groupSizeProblem(n: number, worldSize: number | undefined): LeftOutReason | undefined {
  const most = worldSize ?? MAX_RANK + 1;
  if (n < 1) return { code: 'group_size_zero' };
  if (n > most) return { code: 'group_size_over', n, most, world: worldSize !== undefined };
  if (n === 1) return { code: 'one_rank' };
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
      left.add(c.kind, group, { code: 'bad_count', ...c.info.bad });
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
    if (typeof bytes !== 'number') left.add(c.kind, group, bytes);
    else if (!(bytes >= 0 && Number.isFinite(bytes))) left.add(c.kind, group, { code: 'bad_bytes', bytes });
    else if (!(c.durUs > 0)) left.add(c.kind, group, { code: 'no_duration' });
    else {
      if (src.note) notes.set(`${src.note.from}|${src.note.group}|${src.note.n}`, src.note);
      samples.push({ rank: c.rank, name: c.name, kind: c.kind, group, groupSize: src.n, bytes, durUs: c.durUs });
    }
  }
  return { samples, notes: [...notes.values()] };
}
