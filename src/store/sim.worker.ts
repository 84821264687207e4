// Simulation worker: runs the pure pipeline (both backends) off the main thread so a large
// config (llama3-405b on 1024 ranks: seconds) never freezes the page.

import type { SimConfig } from '../config';
import { simulateConfig } from './engine';
import type { SimReply } from './sim_runner';

interface Scope {
  onmessage: ((ev: MessageEvent<{ id: number; cfg: SimConfig }>) => void) | null;
  postMessage(m: SimReply): void;
}
const scope = self as unknown as Scope;

scope.onmessage = (ev) => {
  const { id, cfg } = ev.data;
  const t0 = performance.now();
  try {
    const { a, b } = simulateConfig(cfg);
    scope.postMessage({ id, ok: true, a, b, ms: performance.now() - t0 });
  } catch (e) {
    scope.postMessage({ id, ok: false, error: e instanceof Error ? e.message : String(e) });
  }
};
