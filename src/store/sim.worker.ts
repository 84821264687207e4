// Simulation worker: runs the pure pipeline (both backends) off the main thread so a large
// config (llama3-405b on 1024 ranks: seconds) never freezes the page. Results travel packed
// (side_codec.ts): a structured clone of big event lists costs more than the simulation.

import type { SimConfig } from '../config';
import { simulateConfig } from './engine';
import { packSide } from './side_codec';
import type { SimReply } from './sim_runner';

interface Scope {
  onmessage: ((ev: MessageEvent<{ id: number; cfg: SimConfig }>) => void) | null;
  postMessage(m: SimReply, transfer?: Transferable[]): void;
}
const scope = self as unknown as Scope;

scope.onmessage = (ev) => {
  const { id, cfg } = ev.data;
  const t0 = performance.now();
  try {
    const { a, b } = simulateConfig(cfg);
    // columns and JSON instead of structured clone of ~10⁵ objects (see side_codec.ts)
    const pa = packSide(a);
    const pb = packSide(b);
    scope.postMessage({ id, ok: true, a: pa.packed, b: pb.packed, ms: performance.now() - t0 }, [
      ...pa.transfer,
      ...pb.transfer,
    ]);
  } catch (e) {
    scope.postMessage({ id, ok: false, error: e instanceof Error ? e.message : String(e) });
  }
};
