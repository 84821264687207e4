// Shared bits of the bench pages: the readiness handshake bench/browser.ts waits on, a seeded
// RNG for inputs, and percentiles (medians: util's midpointMedian). Pages expose one async entry on
// `window.__bench`.

export function ready(api: Record<string, (opts: never) => Promise<unknown>>): void {
  const w = window as unknown as { __bench?: unknown; __benchReady?: boolean };
  w.__bench = api;
  w.__benchReady = true;
}

/** splitmix32-style seeded uniform floats in [-1, 1). */
export function seededFloats(n: number, seed: number): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    z = (z ^ (z >>> 16)) >>> 0;
    out[i] = z / 2 ** 31 - 1;
  }
  return out;
}

/** p-th percentile (0..100), nearest rank. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

/** Untimed collectives before the timed ones (3 below 64 MB, 1 above): the steady state, not the JIT's first calls. */
export const warmupOf = (totalBytes: number): number => (totalBytes >= 64 * 2 ** 20 ? 1 : 3);
