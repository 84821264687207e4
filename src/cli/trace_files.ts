// Writing `compare --trace DIR` all-or-nothing: the whole run is written into a fresh folder next
// to DIR (`.<name>.<pid>.<uuid>.tmp` in DIR's parent: made by mkdir, which never follows a link,
// under a name no one can guess; every file in it created exclusively, flag 'wx'), the files of
// DIR this run does not replace are carried over (hard links, a copy where the file system has
// none), and the fresh folder is switched into place with two renames in one synchronous step,
// so a signal never leaves a mix of old and new files (the importer would merge them). Rank files
// an earlier, larger run left are not carried. Files are streamed (optionally through gzip), one
// trace in memory at a time. A failure is one TraceWriteError naming the path and the reason.
// Temporaries never outlive a run: SIGINT / SIGTERM remove them, and a run removes those that a
// killed run (kill -9) left next to its folder.

import { randomUUID } from 'node:crypto';
import {
  copyFileSync,
  createWriteStream,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
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
  /** Where it goes (under the folder written); ends in `.gz` when it is to be gzipped. */
  readonly path: string;
  /** The file's text in chunks, made when the file is written (so one trace is in memory at a time). */
  readonly chunks: () => Iterable<string>;
}

/**
 * A per-rank file's name as torch.profiler's tensorboard_trace_handler writes it (worker name
 * `rank<r>`, suffix `.pt.trace.json[.gz]`) without its time stamp, so a rerun replaces the file.
 */
export const rankFileName = (rank: number, gzip: boolean): string => `rank${rank}.pt.trace.json${gzip ? '.gz' : ''}`;

/** Rank files of this or an earlier fsdp-sim (`rank<r>.trace.json`): what staleRankFiles names. */
const RANK_FILE = /^rank\d+(\.pt)?\.trace\.json(\.gz)?$/;

const reason = (e: unknown): string => (e as NodeJS.ErrnoException).code ?? (e as Error).message;

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

/** A fresh folder of writeTraceFiles (`.<name>.<pid>.<uuid>.tmp`), or a temporary file of an older fsdp-sim. */
const TEMPORARY = /^(?:\..+\.(\d+)\.[0-9a-f-]{36}(?:\.old)?\.tmp|.+\.trace\.json(?:\.gz)?\.(\d+)\.tmp)$/;

function running(pid: number): boolean {
  try {
    process.kill(pid, 0); // signal 0: only asks whether the process exists
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // it exists, under another user
  }
}

/** A temporary a run that no longer runs left (kill -9): removed before a run writes, never carried. */
function deadTemporary(name: string): boolean {
  const m = TEMPORARY.exec(name);
  const pid = Number(m?.[1] ?? m?.[2] ?? Number.NaN);
  return Number.isInteger(pid) && pid !== process.pid && !running(pid);
}

function removeDeadTemporaries(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) {
    try {
      if (deadTemporary(n)) rmSync(join(dir, n), { recursive: true, force: true });
    } catch {
      // best effort: another user's, or already gone
    }
  }
}

/** A merged trace file of fsdp-sim (`<backend>.trace.json[.gz]`). */
const TRACE_FILE = /\.trace\.json(\.gz)?$/;

/**
 * The first entry of `dir` that is not fsdp-sim's (a trace file, a backend's folder of rank files,
 * a temporary), or undefined: the run replaces the whole folder, so it never takes one that holds
 * anything else (`--trace .` in a repository).
 */
function foreignEntry(dir: string): string | undefined {
  for (const n of readdirSync(dir)) {
    if (TEMPORARY.test(n)) continue;
    const st = lstatSync(join(dir, n));
    if ((st.isFile() || st.isSymbolicLink()) && TRACE_FILE.test(n)) continue; // a link is replaced, never followed
    if (!st.isDirectory()) return n;
    for (const m of readdirSync(join(dir, n))) {
      if (TEMPORARY.test(m)) continue;
      if (!RANK_FILE.test(m) || !lstatSync(join(dir, n, m)).isFile()) return join(n, m);
    }
  }
  return undefined;
}

/**
 * `dir` as a directory that exists, its parents made one at a time (mkdir's `recursive` spins on
 * some /proc paths), a link to a folder resolved; or a TraceWriteError saying why not.
 */
function targetDir(dir: string): string {
  const abs = resolve(dir);
  const parts = abs.split(sep).filter(Boolean);
  for (let k = 1; k <= parts.length; k++) {
    const p = `${sep}${parts.slice(0, k).join(sep)}`;
    let st: ReturnType<typeof lstatSync> | undefined;
    try {
      st = lstatSync(p, { throwIfNoEntry: false });
      if (st?.isSymbolicLink()) st = lstatSync(realpathSync(p));
      if (st === undefined && k < parts.length) mkdirSync(p);
    } catch (e) {
      throw new TraceWriteError(dir, `--trace cannot create directory '${dir}': ${reason(e)}`);
    }
    if (st && !st.isDirectory()) {
      const what = k === parts.length ? 'is a file, not a directory' : `is under '${p}', a file, not a directory`;
      throw new TraceWriteError(dir, `--trace '${dir}' ${what}`);
    }
  }
  try {
    return lstatSync(abs, { throwIfNoEntry: false }) ? realpathSync(abs) : abs;
  } catch (e) {
    throw new TraceWriteError(dir, `--trace cannot read '${dir}': ${reason(e)}`);
  }
}

/** `from`'s entries into `to` (hard links, else copies; folders made), less those `skip` names (absolute). */
function carryOver(from: string, to: string, skip: ReadonlySet<string>): void {
  for (const n of readdirSync(from)) {
    const [src, dst] = [join(from, n), join(to, n)];
    if (skip.has(src) || deadTemporary(n)) continue;
    const st = lstatSync(src);
    if (st.isDirectory()) {
      if (!lstatSync(dst, { throwIfNoEntry: false })) mkdirSync(dst); // a folder this run writes into is there
      carryOver(src, dst, skip);
    } else if (st.isSymbolicLink()) symlinkSync(readlinkSync(src), dst);
    else if (st.isFile()) {
      try {
        linkSync(src, dst);
      } catch {
        copyFileSync(src, dst, 1); // COPYFILE_EXCL
      }
    }
  }
}

/** Streams one file's chunks to `path`, created exclusively, through gzip when the name ends in `.gz`. */
async function writeChunks(path: string, f: TraceFile): Promise<void> {
  const source = Readable.from(f.chunks());
  const out = createWriteStream(path, { flags: 'wx' });
  await (f.path.endsWith('.gz') ? pipeline(source, createGzip(), out) : pipeline(source, out));
}

/** While `work` runs, SIGINT / SIGTERM remove `fresh`, then end the process as signalled. */
async function removedOnSignal<T>(fresh: string, work: () => Promise<T>): Promise<T> {
  const on = (signal: NodeJS.Signals) => {
    rmSync(fresh, { recursive: true, force: true });
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

/** Every file into `fresh` (folders made as needed), then what `old` holds that this run neither writes nor drops. */
async function fillFresh(
  dir: string,
  fresh: string,
  files: readonly (TraceFile & { rel: string })[],
  drop: ReadonlySet<string>,
) {
  for (const f of files) {
    const to = join(fresh, f.rel);
    try {
      mkdirSync(dirname(to), { recursive: true });
      await writeChunks(to, f);
    } catch (e) {
      throw new TraceWriteError(f.path, `--trace cannot write '${f.path}': ${reason(e)}; no trace file was changed`);
    }
  }
  try {
    if (lstatSync(dir, { throwIfNoEntry: false })) carryOver(dir, fresh, drop);
  } catch (e) {
    throw new TraceWriteError(dir, `--trace cannot keep the other files of '${dir}': ${reason(e)}; nothing changed`);
  }
}

/**
 * Writes `files` (paths under `dir`) as one run: `dir` afterwards holds them, and of what it held
 * before everything but `stale` and the files replaced; or, on any error or signal, exactly what it
 * held before.
 */
export async function writeTraceFiles(
  dir: string,
  files: readonly TraceFile[],
  stale: readonly string[] = [],
): Promise<void> {
  const target = targetDir(dir);
  const parent = dirname(target);
  if (parent === target)
    throw new TraceWriteError(dir, `--trace '${dir}' is the root folder; give a folder of its own`);
  try {
    const other = lstatSync(target, { throwIfNoEntry: false }) ? foreignEntry(target) : undefined;
    if (other !== undefined)
      throw new TraceWriteError(
        dir,
        `--trace '${dir}' holds '${other}', not a trace of fsdp-sim; the run replaces the whole folder: ` +
          'give a folder of its own',
      );
    // a folder in a file's place fails before anything is written (a link there is replaced, not followed)
    for (const f of files) {
      if (lstatSync(f.path, { throwIfNoEntry: false })?.isDirectory())
        throw new TraceWriteError(
          f.path,
          `--trace cannot replace '${f.path}': it is not a file; no trace file was changed`,
        );
    }
  } catch (e) {
    if (e instanceof TraceWriteError) throw e;
    throw new TraceWriteError(dir, `--trace cannot read '${dir}': ${reason(e)}; no trace file was changed`);
  }
  removeDeadTemporaries(parent);
  const fresh = join(parent, `.${basename(target)}.${process.pid}.${randomUUID()}.tmp`);
  try {
    mkdirSync(fresh); // exclusive: fails on anything already there, link or not
  } catch (e) {
    throw new TraceWriteError(dir, `--trace cannot create a folder next to '${dir}': ${reason(e)}`);
  }
  const rel = (p: string) => relative(resolve(dir), resolve(p));
  const drop = new Set([...files.map((f) => f.path), ...stale].map((p) => join(target, rel(p))));
  await removedOnSignal(fresh, async () => {
    try {
      await fillFresh(
        target,
        fresh,
        files.map((f) => ({ ...f, rel: rel(f.path) })),
        drop,
      );
    } catch (e) {
      rmSync(fresh, { recursive: true, force: true });
      throw e;
    }
  });
  switchIn(dir, target, fresh);
}

/** `fresh` renamed to `target`, the old folder (if any) moved aside first and removed after: one synchronous step. */
function switchIn(dir: string, target: string, fresh: string): void {
  const old = `${fresh.slice(0, -'.tmp'.length)}.old.tmp`;
  const had = lstatSync(target, { throwIfNoEntry: false }) !== undefined;
  try {
    if (had) renameSync(target, old);
  } catch (e) {
    rmSync(fresh, { recursive: true, force: true });
    throw new TraceWriteError(dir, `--trace cannot replace '${dir}': ${reason(e)}; no trace file was changed`);
  }
  try {
    renameSync(fresh, target);
  } catch (e) {
    if (had) renameSync(old, target); // put the old run back
    rmSync(fresh, { recursive: true, force: true });
    throw new TraceWriteError(dir, `--trace cannot replace '${dir}': ${reason(e)}; no trace file was changed`);
  }
  try {
    if (had) rmSync(old, { recursive: true, force: true });
  } catch {
    // the new run is in place; what is left of the old one is a dead temporary the next run removes
  }
}
