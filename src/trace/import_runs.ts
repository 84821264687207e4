// One run per import: trace files given together must come from the same run. Files of two world
// sizes, of two fsdp-sim runs (fsdpSim.run: backend + config), or a rank at or above the world
// size mean a folder mixed two runs (`--ranks 8` then `--ranks 4` into one directory); merging them
// would print metrics of neither, so the import stops with the files and values named.

import { ImportError } from '../errors';
import { isObject, type Json } from './import_fields';

/** What a file says about the run it came from. */
export interface RunIdentity {
  readonly where: string; // `file[2]`
  readonly worldSize?: number; // distributedInfo.world_size
  readonly run?: string; // fsdpSim.run of our own export
}

/** The identity fields of one parsed trace object (absent fields stay absent). */
export function runIdentity(t: Json, where: string): RunIdentity {
  const di = isObject(t.distributedInfo) ? t.distributedInfo : {};
  const own = isObject(t.fsdpSim) ? t.fsdpSim : {};
  return {
    where,
    ...(Number.isInteger(di.world_size) ? { worldSize: di.world_size as number } : {}),
    ...(typeof own.run === 'string' ? { run: own.run } : {}),
  };
}

/** Throws an ImportError unless every file states the same world size and run, and no rank exceeds it. */
export function checkOneRun(ids: readonly RunIdentity[], ranks: readonly { where: string; rank: number }[]): void {
  const sized = ids.filter((f) => f.worldSize !== undefined);
  const odd = sized.find((f) => f.worldSize !== sized[0].worldSize);
  if (odd) {
    throw new ImportError(
      `${odd.where}.distributedInfo.world_size`,
      `${sized[0].where} says world_size ${sized[0].worldSize} but ${odd.where} says ${odd.worldSize}: ` +
        'these files come from different runs; import the files of one run together',
    );
  }
  const named = ids.filter((f) => f.run !== undefined);
  const other = named.find((f) => f.run !== named[0].run);
  if (other) {
    throw new ImportError(
      `${other.where}.fsdpSim.run`,
      `${named[0].where} is run '${named[0].run}' but ${other.where} is run '${other.run}': ` +
        'import the files of one run together',
    );
  }
  const world = sized[0]?.worldSize;
  const beyond = world === undefined ? undefined : ranks.find((r) => r.rank >= world);
  if (beyond && world !== undefined) {
    throw new ImportError(
      beyond.where,
      `${beyond.where} is rank ${beyond.rank}, but the trace's world_size is ${world} (ranks 0..${world - 1})`,
    );
  }
}
