// Reading the torch-pass fixtures (gzipped JSON torch's own pass wrote) and the fields every one
// of them records, whichever profile or mesh made it.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

/** A reader of gzipped JSON files below `dir` (a folder URL ending in '/'). */
export function gzJsonReader(dir: URL): (path: string) => unknown {
  return (path) => JSON.parse(gunzipSync(readFileSync(new URL(path, dir))).toString('utf8'));
}

/** What torch's pass decided and accounted on one graph. */
export interface TorchPassExpected {
  readonly buckets: string[][];
  readonly overlapping: Record<string, string[]>;
  readonly collectivesBefore: number;
  readonly collectivesAfter: number;
  readonly totalExposedMs: number;
  readonly potentialExposedMs: number;
  readonly originalPeakBytes: number;
  readonly peakBytes: number;
  readonly scheduleOrder: string[];
}
