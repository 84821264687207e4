// Runs simulations for the store: in a Web Worker in the browser (one at a time; a newer request
// terminates a running one, so typing never queues seconds of work), inline where there is no
// Worker (Node tests, CLI).

import type { SimConfig } from '../config';
import { simulateConfig } from './engine';
import { unpackSide, type PackedSide } from './side_codec';
import type { SideResult } from './store_types';

export type SimReply =
  | { readonly id: number; readonly ok: true; readonly a: PackedSide; readonly b: PackedSide; readonly ms: number }
  | { readonly id: number; readonly ok: false; readonly error: string };

type SimOutcome = { readonly a: SideResult; readonly b: SideResult; readonly ms: number };

/** Superseded by a newer request: the caller drops it silently. */
export class SimSuperseded extends Error {}

export interface SimRunner {
  run(cfg: SimConfig): Promise<SimOutcome>;
}

function inlineRunner(): SimRunner {
  return {
    run: async (cfg) => {
      const t0 = performance.now();
      const { a, b } = simulateConfig(cfg);
      return { a, b, ms: performance.now() - t0 };
    },
  };
}

function workerRunner(): SimRunner {
  let worker: Worker | null = null;
  let inline: SimRunner | null = null; // set when the worker cannot load (e.g. a host that blocks module workers)
  let nextId = 1;
  let pending: {
    id: number;
    cfg: SimConfig;
    resolve: (o: SimOutcome) => void;
    reject: (e: Error) => void;
  } | null = null;
  const spawn = (): Worker => {
    const w = new Worker(new URL('./sim.worker.ts', import.meta.url), { type: 'module', name: 'simulator' });
    let everAnswered = false;
    w.onmessage = (ev: MessageEvent<SimReply>) => {
      everAnswered = true;
      const r = ev.data;
      if (!pending || pending.id !== r.id) return;
      const p = pending;
      pending = null;
      if (r.ok) p.resolve({ a: unpackSide(r.a), b: unpackSide(r.b), ms: r.ms });
      else p.reject(new Error(r.error));
    };
    w.onerror = (ev) => {
      ev.preventDefault();
      const p = pending;
      pending = null;
      w.terminate();
      if (worker === w) worker = null;
      if (!p) return;
      if (!everAnswered) {
        // the worker never ran: simulate on the main thread from now on (slower, still correct)
        inline = inlineRunner();
        inline.run(p.cfg).then(p.resolve, p.reject);
      } else p.reject(new Error(ev.message || 'simulation worker failed'));
    };
    return w;
  };
  return {
    run: (cfg) => {
      if (inline) return inline.run(cfg);
      return new Promise<SimOutcome>((resolve, reject) => {
        if (pending) {
          // a newer config wins: stop the old simulation instead of waiting for it
          pending.reject(new SimSuperseded('superseded'));
          pending = null;
          worker?.terminate();
          worker = null;
        }
        worker ??= spawn();
        const id = nextId++;
        pending = { id, cfg, resolve, reject };
        worker.postMessage({ id, cfg });
      });
    },
  };
}

export function createSimRunner(): SimRunner {
  return typeof Worker === 'function' && typeof window !== 'undefined' ? workerRunner() : inlineRunner();
}
