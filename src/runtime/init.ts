// Deterministic parameter initialisation for live training. Every FULL parameter is drawn from a
// seeded PRNG keyed by (seed, parameter name), so the draw depends on neither the world size nor
// the parameter order; rank r then keeps rows [r·shardRows, (r+1)·shardRows) (zero padded), and an
// N-rank run starts from exactly the model a 1-rank run starts from.
// Init follows torchtitan's llama: normal(0, 0.02) weights, RMSNorm weights = 1.

import type { ParamInfo } from '../graph';
import { FNV_OFFSET, fnv1a, fnv1aBytes } from '../util';

/** splitmix32: a 32-bit seeded PRNG → uniform [0, 1). */
export function splitmix32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    z = (z ^ (z >>> 16)) >>> 0;
    return z / 4294967296;
  };
}

/** FNV-1a over a string, mixed with a seed: stable per-name sub-seeds. */
export function hashSeed(seed: number, name: string): number {
  return fnv1a(name, (FNV_OFFSET ^ (seed >>> 0)) >>> 0);
}

/** Standard normal sampler (Box–Muller) over a uniform source. */
function normalSampler(uniform: () => number): () => number {
  let spare: number | undefined;
  return () => {
    if (spare !== undefined) {
      const s = spare;
      spare = undefined;
      return s;
    }
    let u = 0;
    while (u <= 1e-12) u = uniform();
    const v = uniform();
    const r = Math.sqrt(-2 * Math.log(u));
    spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  };
}

/** Default init std (torchtitan llama `init_std`). */
const INIT_STD = 0.02;

/** RMSNorm weights start at one; everything else is normal(0, std). */
function isNormWeight(param: ParamInfo): boolean {
  return param.shape.length === 1 || /norm\.weight$/.test(param.name);
}

/** The full (unsharded) initial value of one parameter, [shape] row-major fp32. */
export function initFullParam(param: ParamInfo, seed: number, std: number = INIT_STD): Float32Array {
  const out = new Float32Array(param.numel);
  if (isNormWeight(param)) return out.fill(1);
  const normal = normalSampler(splitmix32(hashSeed(seed, param.name)));
  for (let i = 0; i < out.length; i++) out[i] = normal() * std;
  return out;
}

/** Elements per dim-0 row: numel / shape[0]. */
function rowElems(param: ParamInfo): number {
  return param.shape[0] > 0 ? param.numel / param.shape[0] : 0;
}

/** Rank r's rows [r·shardRows, (r+1)·shardRows) of a full parameter, zero-padded past shape[0]. */
export function shardOf(full: Float32Array, param: ParamInfo, rank: number): Float32Array {
  const row = rowElems(param);
  const shard = new Float32Array(param.shardRows * row);
  const start = rank * param.shardRows * row;
  const end = Math.min(full.length, start + shard.length);
  if (end > start) shard.set(full.subarray(start, end));
  return shard;
}

/** Reassemble a full parameter from its shards in rank order (padding rows dropped). */
export function unshard(shards: readonly Float32Array[], param: ParamInfo): Float32Array {
  const full = new Float32Array(param.numel);
  let at = 0;
  for (const s of shards) {
    const take = Math.min(s.length, full.length - at);
    if (take <= 0) break;
    full.set(s.subarray(0, take), at);
    at += take;
  }
  return full;
}

/** FNV-1a (32-bit) over the bytes of the arrays, in order → 8 hex digits. */
export function fnv1aHex(arrays: readonly Float32Array[]): string {
  let h = FNV_OFFSET;
  for (const a of arrays) h = fnv1aBytes(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), h);
  return h.toString(16).padStart(8, '0');
}
