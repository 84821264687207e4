// Runs a sweep for the store, point by point, so the page shows progress and Stop ends it at once:
// in a Web Worker in the browser (Stop terminates it mid-point), inline elsewhere (Node tests),
// yielding to the event loop between points.

import type { BackendName } from '../backends';
import type { SimConfig } from '../config';
import { newSweepCache, runSweepPoint, sweepPoints, type SweepAxis, type SweepRow } from '../pipeline';

export interface SweepRequest {
  readonly base: SimConfig;
  readonly axes: readonly SweepAxis[];
  readonly backends: readonly BackendName[];
}

/** What the worker sends: the rows of each finished point, then done (or an error). */
export type SweepMessage =
  | {
      readonly type: 'rows';
      readonly rows: readonly SweepRow[];
      readonly done: number;
      readonly total: number;
    }
  | { readonly type: 'done' }
  | { readonly type: 'error'; readonly error: string };

export interface SweepRun {
  stop(): void;
}

/** Runs every point of the request, calling `send` after each; `stopped` is polled between points. */
export async function runPoints(
  req: SweepRequest,
  send: (m: SweepMessage) => void,
  stopped: () => boolean,
  yieldEach: () => Promise<void>,
): Promise<void> {
  try {
    const points = sweepPoints(req.base, req.axes);
    const cache = newSweepCache();
    for (const [k, p] of points.entries()) {
      await yieldEach(); // first too: the caller has its handle before any message arrives
      if (stopped()) return;
      send({
        type: 'rows',
        rows: runSweepPoint(p, req.backends, cache),
        done: k + 1,
        total: points.length,
      });
    }
    send({ type: 'done' });
  } catch (e) {
    send({ type: 'error', error: e instanceof Error ? e.message : String(e) });
  }
}

function inlineRun(req: SweepRequest, on: (m: SweepMessage) => void): SweepRun {
  let stopped = false;
  void runPoints(
    req,
    (m) => !stopped && on(m),
    () => stopped,
    () => new Promise((r) => setTimeout(r, 0)),
  );
  return { stop: () => void (stopped = true) };
}

function workerRun(req: SweepRequest, on: (m: SweepMessage) => void): SweepRun {
  const w = new Worker(new URL('./sweep.worker.ts', import.meta.url), {
    type: 'module',
    name: 'sweep',
  });
  let live = true;
  w.onmessage = (ev: MessageEvent<SweepMessage>) => {
    if (!live) return;
    on(ev.data);
    if (ev.data.type !== 'rows') w.terminate();
  };
  w.onerror = (ev) => {
    ev.preventDefault();
    w.terminate();
    if (live) on({ type: 'error', error: ev.message || 'sweep worker failed' });
    live = false;
  };
  w.postMessage(req);
  return {
    stop: () => {
      live = false;
      w.terminate();
    },
  };
}

/** Start a sweep; `on` gets its messages until it ends or stop() is called. */
export function startSweepRun(req: SweepRequest, on: (m: SweepMessage) => void): SweepRun {
  return typeof Worker === 'function' && typeof window !== 'undefined' ? workerRun(req, on) : inlineRun(req, on);
}
