// A block's backward recorded while its forward is emitted (micrograd's `_backward` closures):
// each forward op pushes the ops of its gradient, and the backward runs them in reverse,
// summing the gradients of a tensor read twice with `add`. The MoE / MLA block (moe_block.ts)
// is built this way; the Llama block keeps its hand-written backward (backward.ts).
// Parameter gradients follow the Llama block's order: dW, re-gather W, dX, then dW's reduce-scatter.
// Under full activation checkpointing the backward emits the block's forward again on a fresh tape
// in `recompute` mode (names suffixed, each weight gathered once for the backward and read by both
// the recompute and the gradients) and runs that tape: the first forward's activations die with it.
// Under selective AC the tape's forward nodes are what the save policy decides on (tape_recompute.ts).

import type { Emitter } from './emitter';
import { emitAdd, emitMatmul, emitRmsNorm, emitRmsNormBwd, emitSwiglu, emitSwigluBwd } from './emit_ops';
import { RECOMPUTE_SUFFIX } from './checkpoint';
import { backwardWeight, param, type ModelCtx } from './forward';
import { emitGather } from './fsdp';
import { emitWeightGradSync, weightGradOut } from './tp';
import type { GraphNode } from './types';

export class BlockTape {
  private readonly steps: (() => void)[] = [];
  private readonly grads = new Map<string, string>();
  /** The block's input and output tensors, and one past its last forward node's position (`bound`). */
  private ends: { readonly input: string; readonly out: string; readonly end: number } | undefined;
  /** Position of the tape's first node. */
  private readonly first: number;
  /** Recompute mode: the backward's gathered weights by FQN (gathered on first use). */
  private readonly regathered: Map<string, string> | undefined;

  constructor(
    readonly c: ModelCtx,
    recompute = false,
  ) {
    this.regathered = recompute ? new Map() : undefined;
    this.first = c.e.nodes.length;
  }

  /** A node name of this tape: suffixed in recompute mode, so the forward's names stay unique. */
  name(n: string): string {
    return this.regathered === undefined ? n : `${n}${RECOMPUTE_SUFFIX}`;
  }

  /** The weight a forward op reads: gathered just before its use, or (recompute) the backward's gather. */
  forwardWeight(fqn: string): string {
    return this.regathered === undefined ? emitGather(this.c, param(this.c, fqn), '') : this.backwardWeight(fqn);
  }

  /** The weight a gradient op reads (forward.ts backwardWeight), once per FQN in recompute mode. */
  backwardWeight(fqn: string): string {
    const m = this.regathered;
    if (m === undefined) return backwardWeight(this.c, fqn);
    let w = m.get(fqn);
    if (w === undefined) m.set(fqn, (w = backwardWeight(this.c, fqn)));
    return w;
  }

  private get bounds(): { readonly input: string; readonly out: string; readonly end: number } {
    if (this.ends === undefined) throw new Error('internal: a block tape without its input and output');
    return this.ends;
  }

  /** The block's input tensor (what a recompute starts from). */
  get input(): string {
    return this.bounds.input;
  }

  /** The block's input and output tensors: where its backward starts and what it returns. */
  bound(input: string, out: string): void {
    this.ends = { input, out, end: this.e.nodes.length };
  }

  /** The nodes the block's forward emitted, in order (its weight gathers included). */
  forwardNodes(): readonly GraphNode[] {
    return this.e.nodes.slice(this.first, this.bounds.end);
  }

  get e(): Emitter {
    return this.c.e;
  }

  /** Records the backward of the op just emitted. */
  record(step: () => void): void {
    this.steps.push(step);
  }

  /** The gradient of `id`: every op that read `id` has run its backward by now. */
  grad(id: string): string {
    const g = this.grads.get(id);
    if (g === undefined) throw new Error(`internal: no gradient for '${id}'`);
    return g;
  }

  /** Adds `g` to the gradient of `id` (an `add` named after the op that made `g` when one is there). */
  accumulate(id: string, g: string, name: string): void {
    const prev = this.grads.get(id);
    this.grads.set(id, prev === undefined ? g : emitAdd(this.e, { name: `${name}.acc`, a: prev, b: g }));
  }

  /** Runs the recorded backward from the block output's gradient; returns the block input's. */
  backward(dOut: string): string {
    const { input, out } = this.bounds;
    this.grads.set(out, dOut);
    for (let i = this.steps.length - 1; i >= 0; i--) this.steps[i]();
    return this.grad(input);
  }
}

/** y[M,N] = x[M,K]·Wᵀ for the parameter `fqn` (W [N, K], gathered just before its use). */
export function tapeLinear(t: BlockTape, fqn: string, base: string, x: string, N: number, K: number): string {
  const { c, e } = t;
  const name = t.name(base);
  const M = e.tensors[x].shape[0];
  const dt = c.paramDtype;
  const w = t.forwardWeight(fqn);
  const y = emitMatmul(e, { name, a: x, b: w, M, N, K, transB: true, dtype: dt, params: [fqn] });
  t.record(() => {
    const dY = t.grad(y);
    const dW = weightGradOut(c, param(c, fqn)); // tp.ts: a replicated weight's is partial under TP
    emitMatmul(e, { name: dW, a: dY, b: x, M: N, N: K, K: M, transA: true, dtype: dt, params: [fqn] });
    const wb = t.backwardWeight(fqn);
    const dX = emitMatmul(e, { name: `${name}.bwd`, a: dY, b: wb, M, N: K, K: N, dtype: dt, params: [fqn] });
    emitWeightGradSync(c, param(c, fqn));
    t.accumulate(x, dX, `${name}.bwd`);
  });
  return y;
}

/** RMSNorm over the first `cols` columns of x with the weight `fqn`. */
export function tapeRmsNorm(t: BlockTape, fqn: string, label: string, x: string, cols: number): string {
  const { c, e } = t;
  const name = t.name(label);
  const rows = e.tensors[x].shape[0];
  const w = t.forwardWeight(fqn);
  const base = { rows, cols, dtype: c.paramDtype, params: [fqn] };
  const [y, rstd] = emitRmsNorm(e, { ...base, name, x, w, eps: c.args.normEps });
  t.record(() => {
    const wb = t.backwardWeight(fqn);
    const dw = weightGradOut(c, param(c, fqn));
    const [dx] = emitRmsNormBwd(e, { ...base, name: `${name}.bwd`, dy: t.grad(y), x, w: wb, rstd, dw });
    emitWeightGradSync(c, param(c, fqn));
    t.accumulate(x, dx, `${name}.bwd`);
  });
  return y;
}

/** c = a + b; the gradient flows to both. */
export function tapeAdd(t: BlockTape, base: string, a: string, b: string): string {
  const name = t.name(base);
  const out = emitAdd(t.e, { name, a, b });
  t.record(() => {
    const g = t.grad(out);
    t.accumulate(a, g, `${name}.bwd.a`);
    t.accumulate(b, g, `${name}.bwd.b`);
  });
  return out;
}

/** g = silu(a)·b. */
export function tapeSwiglu(t: BlockTape, base: string, a: string, b: string): string {
  const name = t.name(base);
  const g = emitSwiglu(t.e, { name, a, b });
  t.record(() => {
    const [da, db] = emitSwigluBwd(t.e, { name: `${name}.bwd`, dg: t.grad(g), a, b });
    t.accumulate(a, da, `${name}.bwd.a`);
    t.accumulate(b, db, `${name}.bwd.b`);
  });
  return g;
}

/** A SwiGLU feed-forward w2(silu(w1·x)·(w3·x)) of hidden F under `prefix` (dense, or shared experts). */
export function tapeFeedForward(t: BlockTape, prefix: string, x: string, F: number): string {
  const D = t.c.args.dim;
  const a = tapeLinear(t, `${prefix}.w1.weight`, `${prefix}.w1`, x, F, D);
  const b = tapeLinear(t, `${prefix}.w3.weight`, `${prefix}.w3`, x, F, D);
  const g = tapeSwiglu(t, `${prefix}.swiglu`, a, b);
  return tapeLinear(t, `${prefix}.w2.weight`, `${prefix}.w2`, g, D, F);
}
