// Writing `compare --trace` files all-or-nothing: every file goes to a temporary name first and is
// renamed into place only when all were written, and rank files an earlier, larger run left in a
// backend's per-rank folder are removed, so a folder never mixes two runs (the importer would merge
// them). Files are streamed (optionally through gzip), one trace in memory at a time, never one
// string of the whole file. A failure is one TraceWriteError naming the path and the reason.
// Temporaries never outlive a run: SIGINT / SIGTERM remove them, and a run removes those that
// a killed run (kill -9) left in its folders.

import { createWriteStream, lstatSync, mkdirSync, readdirSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { FsdpSimError } from '../errors';

/** A trace could not be written: names the path and the OS reason (ENOTDIR, EACCES, ...). */
export class TraceWriteError extends FsdpSimError {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super('trace_write', message);
  }
}

export interface TraceFile {
  /** Where it goes; ends in `.gz` when it is to be gzipped. */
  readonly path: string;
  /** The file's text in chunks, made when the file is written (so one trace is in memory at a time). */
  readonly chunks: () => Iterable<string>;
}

/**
 * A per-rank file's name as torch.profiler's tensorboard_trace_handler writes it (worker name
 * `rank<r>`, suffix `.pt.trace.json[.gz]`) without its time stamp, so a rerun replaces the file.
 */
export const rankFileName = (rank: number, gzip: boolean): string => `rank${rank}.pt.trace.json${gzip ? '.gz' : ''}`;

/** Rank files of this or an earlier fsdp-sim (`rank<r>.trace.json`): what staleRankFiles removes. */
const RANK_FILE = /^rank\d+(\.pt)?\.trace\.json(\.gz)?$/;

const reason = (e: unknown): string => (e as NodeJS.ErrnoException).code ?? (e as Error).message;

/** `dir` exists as a directory afterwards, or a TraceWriteError says why not. */
function ensureDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    const why = reason(e);
    const what = why === 'EEXIST' || why === 'ENOTDIR' ? 'it or a parent is a file, not a directory' : why;
    throw new TraceWriteError(dir, `--trace cannot create directory '${dir}': ${what}`);
  }
  if (!statSync(dir).isDirectory()) throw new TraceWriteError(dir, `--trace '${dir}' is a file, not a directory`);
}

/** Rank files in `dir` that `keep` does not name: what an earlier run with more ranks left behind. */
export function staleRankFiles(dir: string, keep: readonly string[]): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return []; // no folder yet: nothing stale
  }
  const kept = new Set(keep.map((p) => basename(p)));
  return names.filter((n) => RANK_FILE.test(n) && !kept.has(n)).map((n) => join(dir, n));
}

function removeAll(paths: readonly string[]): void {
  for (const p of paths) {
    try {
      unlinkSync(p);
    } catch {
      // best effort: a temporary file that was never created
    }
  }
}

/** A temporary of writeTraceFiles: `<name>.trace.json[.gz].<pid>.tmp`. */
const TEMPORARY = /^.+\.trace\.json(\.gz)?\.(\d+)\.tmp$/;

function running(pid: number): boolean {
  try {
    process.kill(pid, 0); // signal 0: only asks whether the process exists
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // it exists, under another user
  }
}

/** Temporaries in `dir` of runs that no longer run (kill -9 leaves them): removed before a run writes. */
function removeDeadTemporaries(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) {
    const pid = Number(TEMPORARY.exec(n)?.[2] ?? Number.NaN);
    if (Number.isInteger(pid) && pid !== process.pid && !running(pid)) removeAll([join(dir, n)]);
  }
}

/** While `work` runs, SIGINT / SIGTERM remove the temporaries in `paths`, then end the process as signalled. */
async function removedOnSignal<T>(paths: readonly string[], work: () => Promise<T>): Promise<T> {
  const on = (signal: NodeJS.Signals) => {
    removeAll(paths);
    process.off('SIGINT', on);
    process.off('SIGTERM', on);
    process.kill(process.pid, signal); // no listener now: the default action ends the process
  };
  process.on('SIGINT', on);
  process.on('SIGTERM', on);
  try {
    return await work();
  } finally {
    process.off('SIGINT', on);
    process.off('SIGTERM', on);
  }
}

/** Streams one file's chunks to `path`, through gzip when the name ends in `.gz`. */
async function writeChunks(path: string, f: TraceFile): Promise<void> {
  const source = Readable.from(f.chunks());
  const out = createWriteStream(path);
  await (f.path.endsWith('.gz') ? pipeline(source, createGzip(), out) : pipeline(source, out));
}

/**
 * Write every file, then remove `stale`, or change nothing: temporaries `<path>.<pid>.tmp` are
 * renamed over the targets only once all are written (rename replaces a read-only file too: it
 * needs only the folder to be writable).
 */
export async function writeTraceFiles(files: readonly TraceFile[], stale: readonly string[] = []): Promise<void> {
  for (const d of new Set(files.map((f) => dirname(f.path)))) {
    ensureDir(d);
    removeDeadTemporaries(d);
  }
  // a target no file can be renamed over (a folder in its place) fails before anything is written
  for (const f of files) {
    const st = lstatSync(f.path, { throwIfNoEntry: false });
    if (st && !st.isFile())
      throw new TraceWriteError(
        f.path,
        `--trace cannot replace '${f.path}': it is not a file; no trace file was changed`,
      );
  }
  const tmp = (p: string) => `${p}.${process.pid}.tmp`;
  const written: string[] = [];
  await removedOnSignal(written, async () => {
    for (const f of files) {
      try {
        written.push(tmp(f.path)); // before the write: a half-written temporary is removed too
        await writeChunks(tmp(f.path), f);
      } catch (e) {
        removeAll(written);
        throw new TraceWriteError(f.path, `--trace cannot write '${f.path}': ${reason(e)}; no trace file was changed`);
      }
    }
  });
  for (const p of stale) {
    try {
      unlinkSync(p);
    } catch (e) {
      removeAll(written);
      throw new TraceWriteError(
        p,
        `--trace cannot remove '${p}' left by an earlier run: ${reason(e)}; no new trace was written`,
      );
    }
  }
  for (const [i, f] of files.entries()) {
    try {
      renameSync(written[i], f.path);
    } catch (e) {
      removeAll(written.slice(i));
      throw new TraceWriteError(f.path, `--trace cannot replace '${f.path}': ${reason(e)}`);
    }
  }
}
