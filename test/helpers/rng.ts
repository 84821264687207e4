// Seeded uniform RNG shared by the tests (mulberry32): deterministic cases, no Math.random; and
// f32 arrays drawn from it.

/** mulberry32(seed): a deterministic stream of uniforms in [0, 1). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** n f32 values uniform in [-scale, scale), drawn from `r`. */
export const randF32 = (n: number, r: () => number, scale = 1): Float32Array =>
  Float32Array.from({ length: n }, () => (r() * 2 - 1) * scale);
