// Per-rank noise on a cost model: each rank sees every node's time scaled by a seeded factor in
// [1 − p, 1 + p] (hash of seed, rank and node name; no Math.random), and an optional straggler
// rank is slower by a fixed factor. With cross-rank alignment off, this is what makes ranks plan
// differently.

import { ConfigError } from '../errors';
import type { CollectiveKind, DType, GraphNode } from '../graph/types';
import type { CostModel } from './types';

export interface JitterOptions {
  /** Half-width of the uniform noise, percent (10 → ×[0.9, 1.1]). */
  readonly jitterPct: number;
  readonly seed: number;
  /** One slow rank: all its times × factor (≥ 1 for a straggler). */
  readonly straggler?: { readonly rank: number; readonly factor: number };
}

/** FNV-1a 32-bit over a string: stable across engines. */
export function hashString(s: string, h = 0x811c9dc5): number {
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Deterministic uniform in [-1, 1) from (seed, rank, key), with a murmur3 finalizer to spread bits. */
export function noiseUnit(seed: number, rank: number, key: string): number {
  let h = hashString(`${seed}|${rank}|${key}`);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 2 ** 31 - 1;
}

export function jitteredCostModels(base: CostModel, worldSize: number, opts: JitterOptions): CostModel[] {
  if (!Number.isInteger(worldSize) || worldSize < 1) throw new ConfigError('worldSize', `worldSize must be an integer ≥ 1, got ${worldSize}`);
  if (!Number.isFinite(opts.jitterPct) || opts.jitterPct < 0 || opts.jitterPct >= 100)
    throw new ConfigError('jitterPct', `jitterPct must be in [0, 100), got ${opts.jitterPct}`);
  if (!Number.isFinite(opts.seed)) throw new ConfigError('seed', `seed must be a finite number, got ${opts.seed}`);
  const s = opts.straggler;
  if (s !== undefined) {
    if (!Number.isInteger(s.rank) || s.rank < 0 || s.rank >= worldSize)
      throw new ConfigError('straggler.rank', `straggler.rank must be an integer in [0, ${worldSize - 1}], got ${s.rank}`);
    if (!Number.isFinite(s.factor) || s.factor <= 0)
      throw new ConfigError('straggler.factor', `straggler.factor must be a finite number > 0, got ${s.factor}`);
  }
  const p = opts.jitterPct / 100;
  const models: CostModel[] = [];
  for (let rank = 0; rank < worldSize; rank++) {
    const slow = s !== undefined && s.rank === rank ? s.factor : 1;
    const factor = (key: string) => (1 + p * noiseUnit(opts.seed, rank, key)) * slow;
    models.push({
      label: `${base.label} ±${opts.jitterPct}% seed ${opts.seed} rank ${rank}${slow !== 1 ? ` straggler×${slow}` : ''}`,
      computeUs: (node: GraphNode) => {
        const t = base.computeUs(node);
        return t === 0 ? 0 : t * factor(node.name);
      },
      collectiveUs: (kind: CollectiveKind, bytes: number, groupSize: number, dtype: DType) =>
        base.collectiveUs(kind, bytes, groupSize, dtype) * factor(`${kind}|${bytes}|${groupSize}|${dtype}`),
    });
  }
  return models;
}
