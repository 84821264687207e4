// Test helper: random valid SimConfigs drawn from the field table (seeded).
import { CONFIG_FIELDS, DEFAULT_CONFIG, validateConfig, type FieldSpec, type SimConfig } from '../../../src/config';
import { MODEL_PRESETS, type ModelName } from '../../../src/model';

/** A random allowed value of a field (independent of the codec: drawn from the spec). */
export function randomValue(f: FieldSpec, r: () => number): unknown {
  if (f.kind === 'enum') return f.values[Math.floor(r() * f.values.length)];
  if (f.kind === 'bool') return r() < 0.5;
  if ('nullable' in f && f.nullable && r() < 0.2) return null;
  if (f.kind === 'int') return f.min + Math.floor(r() * (Math.min(f.max, f.min + 5000) - f.min + 1));
  const x = f.min + r() * (f.max - f.min);
  return x === f.min && f.minOpen ? f.max : x;
}

export function randomConfig(r: () => number): SimConfig {
  const partial: Record<string, Record<string, unknown> | unknown> = {};
  for (const f of CONFIG_FIELDS) {
    if (r() < 0.5) continue; // leave about half at their defaults
    const keys = f.path.split('.');
    let o = partial as Record<string, unknown>;
    for (const k of keys.slice(0, -1)) o = (o[k] ??= {}) as Record<string, unknown>;
    o[keys[keys.length - 1]] = randomValue(f, r);
  }
  const p = partial as { ranks?: number; straggler?: { rank?: number | null } };
  const ranks = p.ranks ?? DEFAULT_CONFIG.ranks;
  if (p.straggler?.rank != null) p.straggler.rank = p.straggler.rank % ranks;
  const par = (partial as { parallelism?: Record<string, unknown> }).parallelism;
  if (par !== undefined) {
    // the mesh degrees must multiply to ranks: tp and dp_replicate divisors, dp_shard the rest
    const divisorsOf = (n: number) => Array.from({ length: n }, (_, i) => i + 1).filter((d) => n % d === 0);
    const pick = (xs: number[]) => xs[Math.floor(r() * xs.length)];
    const tp = pick(divisorsOf(ranks));
    const rep = pick(divisorsOf(ranks / tp));
    par.tensor_parallel_degree = tp;
    par.data_parallel_replicate_degree = rep;
    par.data_parallel_shard_degree = r() < 0.5 ? -1 : ranks / (tp * rep);
    // expert parallel only on an MoE model: a divisor of dp_shard · tp and of the experts
    const model = (partial.model ?? DEFAULT_CONFIG.model) as ModelName;
    const experts = MODEL_PRESETS[model].moe?.numExperts ?? 1;
    par.expert_parallel_degree = pick(divisorsOf(ranks / rep).filter((d) => experts % d === 0));
  }

  // EP overlap only where its passes run (graph_trainer_passes.ts epOverlapError): else drawn off
  const epo = (partial as { epOverlap?: { enabled?: boolean } }).epOverlap;
  if (epo?.enabled === true && !validateConfig(partial).ok) epo.enabled = false;
  const v = validateConfig(partial);
  if (!v.ok) throw v.error;
  return v.value;
}
