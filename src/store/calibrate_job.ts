// Calibration off the main thread: the panel's files (bytes) and config go to a worker that
// unzips, parses, reads and fits them (a 100k-collective trace takes seconds), and one message
// comes back: the calibration, or the error's message. Where no Worker exists it runs inline.

import type { SimConfig } from '../config';
import { type Calibration, calibrate, calibrateKeep, TraceSampleReader } from '../pipeline';
import { keptBudget, readTraceStream } from '../trace';

export type { Calibration, FitPoint, GroupFit } from '../pipeline';

export interface CalibrateRequest {
  readonly files: readonly { readonly name: string; readonly bytes: Uint8Array }[];
  readonly config: SimConfig;
}

export type CalibrateMessage =
  | { readonly type: 'done'; readonly calibration: Calibration }
  | { readonly type: 'error'; readonly error: string };

/** The whole job: bytes → calibration, or the message of what stopped it. */
export async function runCalibration(req: CalibrateRequest): Promise<CalibrateMessage> {
  try {
    // streamed (trace_stream.ts): each event kept as calibration reads it, each file read as it arrives
    const samples = new TraceSampleReader(req.files.length);
    const budget = keptBudget(undefined, 'calibrate on fewer or shorter traces');
    for (const f of req.files) {
      const bytes = new Blob([f.bytes as Uint8Array<ArrayBuffer>]).stream();
      samples.add(f.name, await readTraceStream(f.name, bytes, { keep: calibrateKeep, budget }));
    }
    const t = samples.result();
    if (!t.ok) return { type: 'error', error: t.error.message };
    return { type: 'done', calibration: calibrate(t.value, req.config) };
  } catch (e) {
    return { type: 'error', error: e instanceof Error ? e.message : String(e) };
  }
}

export interface CalibrateRun {
  readonly result: Promise<CalibrateMessage>;
  /** Ends the run; its result never arrives. */
  cancel(): void;
}

function workerRun(req: CalibrateRequest): CalibrateRun {
  const w = new Worker(new URL('./calibrate.worker.ts', import.meta.url), { type: 'module', name: 'calibrate' });
  const result = new Promise<CalibrateMessage>((resolve) => {
    w.onmessage = (ev: MessageEvent<CalibrateMessage>) => {
      w.terminate();
      resolve(ev.data);
    };
    w.onerror = (ev) => {
      ev.preventDefault();
      w.terminate();
      resolve({ type: 'error', error: ev.message || 'calibration worker failed' });
    };
  });
  // the buffers move to the worker: the page keeps no second copy of a large trace
  w.postMessage(
    req,
    req.files.map((f) => f.bytes.buffer as ArrayBuffer),
  );
  return { result, cancel: () => w.terminate() };
}

/** Start a calibration: in a worker in the browser, inline elsewhere. */
export function startCalibration(req: CalibrateRequest): CalibrateRun {
  if (typeof Worker === 'function' && typeof window !== 'undefined') return workerRun(req);
  return { result: runCalibration(req), cancel: () => {} };
}
