// Shape-derived facts of FX nodes: which output of a multi-output node each getitem reads, and
// FLOPs from shapes (2·numel(C)·K for matmuls; FlashAttention's count for attention, causal).

import { ATTENTION_BWD_FACTOR, numel } from './flops';
import { preview } from '../errors';
import type { FxDump, FxNode } from './fx_schema';
import { classifyTarget, fxOpName, matmulFirstOperand, type FxClass } from './fx_targets';
import type { DType } from './types';

const j = (v: unknown): string => preview(v);

/** Views that select part of their input (out ≤ in elements); expand grows it; every other view keeps the count. */
const PART_VIEWS: ReadonlySet<string> = new Set([
  'slice',
  'select',
  'narrow',
  'split',
  'split_with_sizes',
  'chunk',
  'tensor_split',
  'unbind',
  'diagonal',
  'as_strided',
]);
const GROW_VIEWS: ReadonlySet<string> = new Set(['expand', 'view_as_real', 'view_as_complex']);

/**
 * A cast or view must agree with its input's element count: a cast keeps the shape, a reshape the
 * count, a slice takes at most the input. A placeholder whose shape disagrees with the op reading
 * it would otherwise be believed (a 20× larger shard inflates the peak silently).
 */
export function checkViewShape(
  cls: 'view' | 'cast',
  fx: FxNode,
  input: readonly number[],
  bad: (field: string, why: string) => never,
  out: readonly number[] = fx.shape as readonly number[],
): void {
  const op = fxOpName(fx.target);
  if (fx.multi && !(cls === 'view' && PART_VIEWS.has(op)))
    bad('multi', `a multi-output '${op}' must be a view that splits its input (${[...PART_VIEWS].join(', ')})`);
  const [nIn, nOut] = [numel(input), numel(out)];
  if (cls === 'cast' && j(out) !== j(input))
    bad('shape', `${j(out)} differs from its input's ${j(input)} (a cast keeps the shape)`);
  if (cls === 'view' && PART_VIEWS.has(op) && nOut > nIn)
    bad('shape', `${j(out)} has more elements than its input's ${j(input)} ('${op}' selects part of it)`);
  if (cls === 'view' && !PART_VIEWS.has(op) && !GROW_VIEWS.has(op) && nOut !== nIn) {
    bad('shape', `${j(out)} has ${nOut} elements but its input ${j(input)} has ${nIn} ('${op}' keeps the count)`);
  }
}

/** A getitem's reading of a multi-output node: which output, and the dtype it reveals. */
export interface Claim {
  readonly source: string;
  readonly index: number;
  readonly dtype: DType;
}

/**
 * Which output of a multi-output node each getitem reads: the dump has no index, so match by
 * shape, first unclaimed output first (torch emits getitems in output order).
 */
export function getitemClaims(d: FxDump): Map<string, Claim> {
  const multi = new Map<string, FxNode>();
  const taken = new Map<string, Set<number>>();
  const out = new Map<string, Claim>();
  for (const fx of d.nodes) {
    if (fx.multi) multi.set(fx.name, fx);
    if (classifyTarget(fx.target) !== 'getitem' || fx.op !== 'call_function' || fx.args.length !== 1 || !fx.shape)
      continue;
    const m = multi.get(fx.args[0]);
    if (!m?.multi) continue;
    const used = taken.get(m.name) ?? new Set<number>();
    taken.set(m.name, used);
    const same = (k: number) => j(m.multi?.[k]) === j(fx.shape);
    let k = m.multi.findIndex((_, q) => same(q) && !used.has(q));
    if (k < 0) k = m.multi.findIndex((_, q) => same(q));
    if (k < 0) continue;
    used.add(k);
    out.set(fx.name, { source: m.name, index: k, dtype: fx.dtype as DType });
  }
  return out;
}

/** FLOPs from shapes: 2·numel(C)·K for matmuls; FlashAttention counts (causal) for attention. */
export function computeFlops(
  cls: FxClass,
  fx: FxNode,
  shapes: (readonly number[] | undefined)[],
  bad: (field: string, why: string) => never,
): number {
  if (cls === 'matmul') {
    const a = shapes[matmulFirstOperand(fx.target)];
    const b = shapes[matmulFirstOperand(fx.target) + 1];
    const c = fx.shape;
    if (!a || !b || !c || a.length < 2 || b.length < 2 || c.length < 2) {
      const got = `${j(a)} · ${j(b)} → ${j(c)}`;
      bad('shape', `matmul '${fx.target}' needs two ≥2-D operands and a ≥2-D result, got ${got}`);
    }
    const K = a[a.length - 1];
    if (b[b.length - 2] !== K || c[c.length - 2] !== a[a.length - 2] || c[c.length - 1] !== b[b.length - 1]) {
      bad('shape', `matmul shapes do not agree: ${j(a)} · ${j(b)} → ${j(c)}`);
    }
    return 2 * numel(c) * K;
  }
  if (cls === 'attention' || cls === 'attention_bwd') {
    const off = cls === 'attention' ? 0 : 1; // backward: (grad_out, q, k, v, out, ...)
    const q = shapes[off];
    const k = shapes[off + 1];
    if (!q || !k || q.length < 2 || k.length < 2 || q[q.length - 1] !== k[k.length - 1]) {
      bad('args', `attention '${fx.target}' needs q and k with the same head dim, got ${j(q)} and ${j(k)}`);
    }
    const fwd = (4 * numel(q) * k[k.length - 2]) / 2; // 4·(B·H)·S·Skv·hd, causal halves it
    return cls === 'attention' ? fwd : ATTENTION_BWD_FACTOR * fwd;
  }
  return fx.shape ? numel(fx.shape) : (fx.multi ?? []).reduce((s, m) => s + numel(m), 0);
}
