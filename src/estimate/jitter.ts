// Per-rank noise on a cost model: each rank sees every node's time scaled by a seeded factor in
// [1 − p, 1 + p] (hash of seed, rank and node name; no Math.random), and an optional straggler
// rank computes slower by a fixed factor. With cross-rank alignment off, this is what makes ranks plan
// differently.

import { ConfigError } from '../errors';
import { fnv1a } from '../util';
import type { CollectiveKind, DType, GraphNode } from '../graph';
import type { CostModel } from './cost_types';

export interface JitterOptions {
  /** Half-width of the uniform noise, percent (10 → ×[0.9, 1.1]). */
  readonly jitterPct: number;
  readonly seed: number;
  /** One slow rank: its compute times × factor (≥ 1 for a straggler); collectives keep the noise only. */
  readonly straggler?: { readonly rank: number; readonly factor: number };
}

/** murmur3's 32-bit finalizer: spreads every input bit over the output. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Deterministic uniform in [-1, 1) from (seed, rank) and the hash of a key (a node name). */
function noiseFromHash(seed: number, rank: number, keyHash: number): number {
  const h = fmix32(keyHash ^ fmix32((Math.imul(seed | 0, 0x9e3779b1) ^ Math.imul(rank + 1, 0x85ebca77)) >>> 0));
  return h / 2 ** 31 - 1;
}

/** Deterministic uniform in [-1, 1) from (seed, rank, key). */
function noiseUnit(seed: number, rank: number, key: string): number {
  return noiseFromHash(seed, rank, fnv1a(key));
}

export function jitteredCostModels(base: CostModel, worldSize: number, opts: JitterOptions): CostModel[] {
  if (!Number.isInteger(worldSize) || worldSize < 1)
    throw new ConfigError('worldSize', `worldSize must be an integer ≥ 1, got ${worldSize}`);
  if (!Number.isFinite(opts.jitterPct) || opts.jitterPct < 0 || opts.jitterPct >= 100)
    throw new ConfigError('jitterPct', `jitterPct must be in [0, 100), got ${opts.jitterPct}`);
  if (!Number.isFinite(opts.seed)) throw new ConfigError('seed', `seed must be a finite number, got ${opts.seed}`);
  const s = opts.straggler;
  if (s !== undefined) {
    if (!Number.isInteger(s.rank) || s.rank < 0 || s.rank >= worldSize)
      throw new ConfigError(
        'straggler.rank',
        `straggler.rank must be an integer in [0, ${worldSize - 1}], got ${s.rank}`,
      );
    if (!Number.isFinite(s.factor) || s.factor <= 0)
      throw new ConfigError('straggler.factor', `straggler.factor must be a finite number > 0, got ${s.factor}`);
  }
  const p = opts.jitterPct / 100;
  // shared by all ranks: the base time and the name hash of each node (1024 ranks × 16k nodes
  // would otherwise re-run the roofline and re-hash every name per rank)
  const baseByNode = new WeakMap<GraphNode, { us: number; hash: number }>();
  const baseOfNode = (node: GraphNode) => {
    let b = baseByNode.get(node);
    if (b === undefined) {
      b = { us: base.computeUs(node), hash: fnv1a(node.name) };
      baseByNode.set(node, b);
    }
    return b;
  };
  const models: CostModel[] = [];
  for (let rank = 0; rank < worldSize; rank++) {
    const slow = s !== undefined && s.rank === rank ? s.factor : 1;
    models.push({
      ...(base.overlapSlowdown !== undefined ? { overlapSlowdown: base.overlapSlowdown } : {}),
      label:
        `${base.label} ±${opts.jitterPct}% seed ${opts.seed} rank ` +
        `${rank}${slow !== 1 ? ` straggler×${slow}` : ''}`,
      computeUs: (node: GraphNode) => {
        const b = baseOfNode(node);
        return b.us === 0 ? 0 : b.us * (1 + p * noiseFromHash(opts.seed, rank, b.hash)) * slow;
      },
      collectiveUs: (kind: CollectiveKind, bytes: number, groupSize: number, dtype: DType, groupStride = 1) =>
        // the straggler is a slow GPU (throttled clocks), not a slow link: its collectives only get the noise
        base.collectiveUs(kind, bytes, groupSize, dtype, groupStride) *
        (1 +
          p *
            noiseUnit(
              opts.seed,
              rank,
              `${kind}|${bytes}|${groupSize}|${dtype}${groupStride === 1 ? '' : `|${groupStride}`}`,
            )),
    });
  }
  return models;
}
