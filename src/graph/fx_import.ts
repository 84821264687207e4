// Import of torch FX graph dumps (docs/ARCHITECTURE.md §8) as a StepGraph, so the backends
// can run on a graph PyTorch itself produced. A forward and a backward dump can be joined
// into one step: backward placeholders that name a forward node read that node's tensor;
// backward nodes whose name the forward already used are renamed `<name>.bw`.
// Collectives keep torch's own estimate (`est_ms`). Attention is counted causal.

import { ImportError, err, ok, preview, type Result } from '../errors';
import { Emitter } from './emitter';
import { GraphError } from './graph_errors';
import { numel } from './flops';
import { MAX_CLOCK_US, readFxDump, type FxDump, type FxNode } from './fx_schema';
import { checkCollectiveShape, collectiveGroup } from './fx_collectives';
import { checkViewShape, computeFlops, getitemClaims, type Claim } from './fx_shapes';
import { inferFxLayers } from './fx_layers';
import { classifyTarget, type FxClass } from './fx_targets';
import type { CollectiveKind, DType, FxGraphBoundary, GraphNode, ParamInfo, Phase, StepGraph } from './types';
import { verifyGraph } from './verify';

/** What an FX name resolves to: its output tensor(s), and for collectives the IR node name. */
interface Ref {
  readonly tensors: readonly string[];
  readonly multi: boolean;
  readonly collective?: string; // IR name of the collective node
  readonly producer?: number; // IR node id, absent for placeholders
  readonly input?: boolean; // a placeholder of the FX graph being converted
}

/** Imports one dump, or [forward, backward] joined into one step. Never throws. */
export function importFxGraph(json: unknown | unknown[]): Result<StepGraph, ImportError> {
  try {
    return ok(importOrThrow(json));
  } catch (e) {
    if (e instanceof ImportError) return err(e);
    if (e instanceof GraphError)
      return err(new ImportError('graph', `fx dump: the imported graph does not verify: ${e.message}`));
    return err(
      new ImportError('internal', `fx dump: internal error while importing: ${(e as Error)?.message ?? String(e)}`),
    );
  }
}

function importOrThrow(json: unknown): StepGraph {
  const parts = Array.isArray(json) ? json : [json];
  if (parts.length < 1 || parts.length > 2) {
    throw new ImportError('dumps', `fx import takes one dump or [forward, backward], got a list of ${parts.length}`);
  }
  const dumps = parts.map((p, k) => {
    try {
      return readFxDump(p);
    } catch (e) {
      if (e instanceof ImportError && parts.length > 1)
        throw new ImportError(`dumps[${k}].${e.where}`, `dump ${k}: ${e.message}`);
      throw e;
    }
  });
  checkClockRange(dumps);
  if (dumps.length === 2) {
    if (dumps[0].graph === dumps[1].graph) {
      throw new ImportError(
        'graph',
        `fx import of two dumps needs one forward and one backward, got two '${dumps[0].graph}'`,
      );
    }
    if (dumps[0].worldSize !== dumps[1].worldSize) {
      throw new ImportError(
        'world_size',
        `fx dumps disagree on world_size: ${dumps[0].worldSize} vs ${dumps[1].worldSize}`,
      );
    }
    if (JSON.stringify(dumps[0].mesh) !== JSON.stringify(dumps[1].mesh))
      throw new ImportError('mesh', `fx dumps disagree on mesh: ${j(dumps[0].mesh)} vs ${j(dumps[1].mesh)}`);
    dumps.sort((a, b) => (a.graph === 'forward' ? 0 : 1) - (b.graph === 'forward' ? 0 : 1));
  }
  const c = new Converter(dumps[0].worldSize);
  let prevScope: Map<string, Ref> | undefined;
  for (const d of dumps) prevScope = c.convert(d, prevScope);
  const g = inferFxLayers(c.finish(dumps));
  verifyGraph(g);
  return g;
}

class Converter {
  readonly e = new Emitter();
  private readonly usedNames = new Set<string>();
  private readonly waited = new Set<string>();
  private readonly params = new Map<string, ParamInfo>();
  private firstAgDtype: DType | undefined;
  private firstRsDtype: DType | undefined;
  private tokensShape: readonly number[] | undefined;
  /** Per dump: its placeholders (tensor ids, in order) and outputs: torch runs its pass per FX graph. */
  private readonly fxGraphs: FxGraphBoundary[] = [];
  private placeholders: string[] = [];

  constructor(readonly n: number) {}

  /** Converts one dump; `outer` is the forward's scope when this is the joined backward. */
  convert(d: FxDump, outer: Map<string, Ref> | undefined): Map<string, Ref> {
    this.e.phase = d.graph as Phase;
    const scope = new Map<string, Ref>();
    const seen = new Set<string>();
    const claims = getitemClaims(d);
    for (const fx of d.nodes) {
      const where = `nodes[${fx.i}]`;
      const at = `node ${fx.i} '${fx.name}'`;
      if (seen.has(fx.name))
        throw new ImportError(`${where}.name`, `${at}: field 'name' duplicated (names must be unique)`);
      seen.add(fx.name);
      const ins: Ref[] = fx.args.map((a) => {
        const r = scope.get(a);
        if (!r)
          throw new ImportError(`${where}.args`, `${at}: field 'args' names '${a}', which is not an earlier node`);
        return r;
      });
      const bad = (field: string, why: string): never => {
        throw new ImportError(`${where}.${field}`, `${at}: field '${field}' ${why}`);
      };
      try {
        this.convertNode({ d, fx, ins, scope, outer, claims, bad });
      } catch (e) {
        if (e instanceof GraphError) throw new ImportError(where, `${at}: ${e.message}`);
        throw e;
      }
    }
    return scope;
  }

  private irName(name: string): string {
    let s = name;
    while (this.usedNames.has(s)) s = `${s}.bw`;
    this.usedNames.add(s);
    return s;
  }

  private convertNode(c: NodeCtx): void {
    const { fx } = c;
    if (fx.op === 'output') return this.outputNode(c);
    if (fx.op === 'placeholder') return this.placeholder(c);
    const cls = classifyTarget(fx.target);
    switch (cls) {
      case 'other_collective':
        return c.bad(
          'target',
          `'${fx.target}' is not supported (collectives: all_gather_into_tensor, reduce_scatter_tensor, ` +
            'all_reduce, all_to_all_single, wait_tensor)',
        );
      case 'all_gather':
      case 'reduce_scatter':
      case 'all_reduce':
      case 'all_to_all':
        return this.collective(c, cls);
      case 'wait':
        return this.wait(c);
      case 'getitem':
        return this.getitem(c);
      case 'view':
      case 'cast':
        return fx.multi ? this.multiView(c) : this.viewOrCast(c, cls);
      default:
        return this.compute(c, cls);
    }
  }

  private outputNode(c: NodeCtx): void {
    this.fxGraphs.push({
      phase: c.d.graph,
      placeholders: this.placeholders,
      outputs: [...new Set(c.ins.flatMap((r) => r.tensors))],
    });
    this.placeholders = [];
  }

  private placeholder({ fx, scope, outer, bad }: NodeCtx): void {
    const { shape, dtype } = fx;
    const linked = outer?.get(fx.name);
    if (linked) {
      scope.set(fx.name, { ...linked, input: true });
      this.placeholders.push(...linked.tensors);
      return;
    }
    if (!shape || !dtype) return bad('shape', 'must be a single shape for a placeholder');
    // a value that is no tensor (a DeviceMesh in a 2-D graph) holds no memory: an empty tensor
    const dims = fx.nonTensor ? [0] : shape;
    const id = this.e.tensor(this.irName(fx.name), dims, dtype, { persistent: /^primals_/.test(fx.name) });
    this.placeholders.push(id);
    if ((dtype === 'i32' || dtype === 'i64') && this.tokensShape === undefined) this.tokensShape = shape;
    scope.set(fx.name, { tensors: [id], multi: false, input: true });
  }

  private collective(c: NodeCtx, kind: CollectiveKind): void {
    const { fx, d, bad } = c;
    const e = this.e;
    const [shape, dtype] = single(c, kind);
    const src = oneInput(c);
    const t = e.tensors[src];
    const g = collectiveGroup(fx, d.mesh, this.n, bad);
    checkCollectiveShape(kind, t.shape, shape, g.groupSize, bad);
    if (t.dtype !== dtype) bad('dtype', `${dtype} differs from its input's ${t.dtype}`);
    const name = this.irName(fx.name);
    const out = e.tensor(name, shape, dtype);
    // tp and ep collectives move activations: the parameter and gradient dtypes are FSDP's
    const fsdp = kind !== 'all_to_all' && g.group !== 'tp';
    if (fsdp && kind === 'all_gather') this.firstAgDtype ??= dtype;
    if (fsdp && kind === 'reduce_scatter') this.firstRsDtype ??= dtype;
    const param = fsdp && kind === 'all_gather' ? this.traceParam(src, shape) : undefined;
    // SimpleFSDP averages gradients; tensor parallelism sums partial results
    const reduceOp =
      kind === 'all_gather' || kind === 'all_to_all' ? undefined : kind === 'reduce_scatter' && fsdp ? 'avg' : 'sum';
    const node = e.node({
      name,
      kind,
      op: fx.target,
      inputs: [src],
      outputs: [out],
      attrs: { target: fx.target },
      ...(param ? { params: [param] } : {}),
      collective: {
        kind,
        ...g,
        dtype,
        inputBytes: t.bytes,
        outputBytes: e.tensors[out].bytes,
        ...(reduceOp ? { reduceOp } : {}),
      },
      ...torchEstimates(fx),
    });
    c.scope.set(fx.name, { tensors: [out], multi: false, collective: name, producer: node.id });
  }

  private wait(c: NodeCtx): void {
    const { fx, ins, bad } = c;
    const e = this.e;
    const [shape, dtype] = single(c, 'wait');
    // torch schedules only waits on a collective of the same graph (the backward may wait again
    // on a collective the forward saved): any other wait on a graph input is a no-op view
    if (ins.length === 1 && ins[0].input) return this.viewOrCast(c, 'view');
    if (ins.length !== 1 || ins[0].collective === undefined)
      bad(
        'args',
        'must name exactly one all_gather / reduce_scatter / all_reduce / all_to_all node (wait on a non-collective)',
      );
    const coll = ins[0].collective as string;
    if (this.waited.has(coll)) bad('args', `waits on '${coll}' a second time`);
    this.waited.add(coll);
    const src = ins[0].tensors[0];
    const st = e.tensors[src];
    if (numel(shape) !== numel(st.shape) || dtype !== st.dtype)
      bad('shape', `${j(shape)} ${dtype} differs from its collective's ${j(st.shape)} ${st.dtype}`);
    const name = this.irName(fx.name);
    const out = e.tensor(name, shape, dtype, { aliasOf: src });
    const cNode = e.nodes[ins[0].producer as number];
    const node = e.node({
      name,
      kind: 'wait',
      op: fx.target,
      inputs: [src],
      outputs: [out],
      waitOf: coll,
      attrs: { target: fx.target },
      ...(cNode.params ? { params: cNode.params } : {}),
      ...torchEstimates(fx),
    });
    c.scope.set(fx.name, { tensors: [out], multi: false, producer: node.id });
  }

  private getitem(c: NodeCtx): void {
    const { fx, ins, bad } = c;
    const [shape, dtype] = single(c, 'getitem');
    if (ins.length !== 1) bad('args', 'must name exactly one node');
    const r = ins[0];
    const k = r.multi ? c.claims.get(fx.name)?.index : 0;
    if (k === undefined) bad('shape', `${j(shape)} matches no output of '${fx.args[0]}'`);
    const src = r.tensors[k as number];
    const name = this.irName(fx.name);
    const out = this.e.tensor(name, shape, dtype, { aliasOf: src });
    const node = this.e.node({
      name,
      kind: 'view',
      op: fx.target,
      inputs: [src],
      outputs: [out],
      attrs: { target: fx.target },
      ...torchEstimates(fx),
    });
    c.scope.set(fx.name, { tensors: [out], multi: false, producer: node.id });
  }

  private viewOrCast(c: NodeCtx, cls: 'view' | 'cast'): void {
    const { fx } = c;
    const e = this.e;
    const [shape, dtype] = single(c, cls);
    const src = oneInput(c);
    checkViewShape(cls, fx, e.tensors[src].shape, c.bad);
    const name = this.irName(fx.name);
    const out = e.tensor(name, shape, dtype, cls === 'view' ? { aliasOf: src } : undefined);
    const node = e.node({
      name,
      kind: cls,
      op: fx.target,
      inputs: [...new Set(c.ins.flatMap((r) => r.tensors))],
      outputs: [out],
      bytesMoved: cls === 'cast' ? e.tensors[src].bytes + e.tensors[out].bytes : 0,
      flops: cls === 'cast' ? numel(shape) : 0,
      attrs: { target: fx.target },
      ...torchEstimates(fx),
    });
    c.scope.set(fx.name, { tensors: [out], multi: false, producer: node.id });
  }

  /** split / chunk / unbind: one view of its input per output, each aliasing the input's storage. */
  private multiView(c: NodeCtx): void {
    const { fx } = c;
    const e = this.e;
    const src = oneInput(c);
    const input = e.tensors[src];
    const name = this.irName(fx.name);
    const outs = (fx.multi ?? []).map((s, k) => {
      checkViewShape('view', fx, input.shape, c.bad, s);
      return e.tensor(`${name}.${k}`, s, fx.multiDtypes?.[k] ?? input.dtype, { aliasOf: src });
    });
    const node = e.node({
      name,
      kind: 'view',
      op: fx.target,
      inputs: [src],
      outputs: outs,
      attrs: { target: fx.target },
      ...torchEstimates(fx),
    });
    c.scope.set(fx.name, { tensors: outs, multi: true, producer: node.id });
  }

  private compute(c: NodeCtx, cls: FxClass): void {
    const { fx, ins } = c;
    const e = this.e;
    const name = this.irName(fx.name);
    const inTensors = [...new Set(ins.flatMap((r) => r.tensors))];
    const outs = this.outputsOf(fx, name, ins, c.claims);
    const shapes = ins.map((r) => (r.tensors.length === 1 ? e.tensors[r.tensors[0]].shape : undefined));
    const flops = computeFlops(cls, fx, shapes, c.bad);
    let bytes = 0;
    for (const t of [...inTensors, ...outs]) bytes += e.tensors[t].bytes;
    // torch's own classification, where the dump carries it, decides what counts as compute
    const matmulLike = fx.kind !== undefined ? fx.kind === 'compute' : cls !== 'compute';
    const node = e.node({
      name,
      kind: 'compute',
      op: cls === 'compute' ? fx.target : cls,
      inputs: inTensors,
      outputs: outs,
      flops,
      bytesMoved: bytes,
      matmulLike,
      attrs: { target: fx.target },
      ...torchEstimates(fx),
    });
    c.scope.set(fx.name, { tensors: outs, multi: fx.multi !== undefined, producer: node.id });
  }

  /** Output tensors of a compute node; a multi-output node's dtypes come from its getitems. */
  private outputsOf(fx: FxNode, name: string, ins: readonly Ref[], claims: Map<string, Claim>): string[] {
    if (!fx.multi) return [this.e.tensor(name, fx.shape as number[], fx.dtype as DType)];
    const dflt: DType = ins.length > 0 && ins[0].tensors.length > 0 ? this.e.tensors[ins[0].tensors[0]].dtype : 'fp32';
    const dtypes = new Map<number, DType>();
    for (const cl of claims.values())
      if (cl.source === fx.name && !dtypes.has(cl.index)) dtypes.set(cl.index, cl.dtype);
    return fx.multi.map((s, k) => this.e.tensor(`${name}.${k}`, s, fx.multiDtypes?.[k] ?? dtypes.get(k) ?? dflt));
  }

  /** Follows an all-gather's input back through casts/views to a placeholder: that is a parameter shard. */
  private traceParam(src: string, fullShape: readonly number[]): string | undefined {
    let t = src;
    for (let hops = 0; hops < 8; hops++) {
      const p = this.e.producer.get(t);
      if (p === undefined) break;
      const pn = this.e.nodes[p];
      if ((pn.kind !== 'cast' && pn.kind !== 'view') || pn.inputs.length !== 1) return undefined;
      t = pn.inputs[0];
    }
    const info = this.e.tensors[t];
    if (!info || this.e.producer.has(t)) return undefined;
    if (!this.params.has(t)) {
      this.params.set(t, { name: t, shape: [...fullShape], numel: numel(fullShape), shardRows: info.shape[0] ?? 1 });
    }
    return t;
  }

  finish(dumps: readonly FxDump[]): StepGraph {
    const ts = this.tokensShape;
    const mesh = dumps[0].mesh;
    const batch = ts && ts.length === 2 ? ts[0] : 1;
    const seqLen = ts ? (ts.length === 2 ? ts[1] : numel(ts)) : 1;
    return {
      nodes: this.e.nodes as GraphNode[],
      tensors: this.e.tensors,
      ...(this.fxGraphs.length === dumps.length ? { fxGraphs: this.fxGraphs } : {}),
      params: [...this.params.values()],
      meta: {
        model: 'fx-import',
        worldSize: this.n,
        ...(mesh ? { mesh } : {}),
        paramDtype: this.firstAgDtype ?? 'bf16',
        reduceDtype: this.firstRsDtype ?? 'fp32',
        batch,
        seqLen,
        source: dumps.map((d) => `${d.graph}: ${d.source}`).join(' | '),
      },
    };
  }
}

const j = (v: unknown): string => preview(v);

/**
 * The step runs every node once: estimates that add up past 2^53 µs would leave the simulated
 * clock unable to tell a short kernel from none (each one alone is bounded by the schema).
 */
function checkClockRange(dumps: readonly FxDump[]): void {
  let us = 0;
  dumps.forEach((d, k) => {
    for (const fx of d.nodes) {
      us += (fx.estMs ?? 0) * 1000;
      if (us <= MAX_CLOCK_US) continue;
      const [key, label] = dumps.length > 1 ? [`dumps[${k}].`, `dump ${k}: `] : ['', ''];
      throw new ImportError(
        `${key}nodes[${fx.i}].est_ms`,
        `${label}node ${fx.i} '${fx.name}': field 'est_ms' makes the estimates add up to more than 2^53 µs ` +
          `(${MAX_CLOCK_US / 1000} ms), past the simulated clock's range, got ${fx.estMs}`,
      );
    }
  });
}

/** The node being converted, with its dump, resolved inputs, scopes and error helper. */
interface NodeCtx {
  readonly d: FxDump;
  readonly fx: FxNode;
  readonly ins: readonly Ref[];
  readonly scope: Map<string, Ref>;
  readonly outer: Map<string, Ref> | undefined;
  readonly claims: Map<string, Claim>;
  readonly bad: (field: string, why: string) => never;
}

/** The node's one result shape and dtype (a multi-output node has none). */
function single(c: NodeCtx, what: string): [readonly number[], DType] {
  const { shape, dtype, target } = c.fx;
  if (!shape || !dtype) return c.bad('shape', `must be a single shape for ${what} '${target}' (got 'multi')`);
  return [shape, dtype];
}

/** The one tensor the node's first argument names. */
function oneInput({ fx, ins, bad }: NodeCtx): string {
  if (ins.length < 1 || ins[0].tensors.length !== 1)
    bad('args', `must start with one single-tensor node for '${fx.target}'`);
  return ins[0].tensors[0];
}

/**
 * The estimates torch's pass used, as a dump records them (est_ms on every node; latency and
 * footprint on collectives).
 */
function torchEstimates(fx: FxNode): { estMs?: number; estMsSize0?: number; sizeBytes?: number } {
  return {
    ...(fx.estMs !== undefined ? { estMs: fx.estMs } : {}),
    ...(fx.estMsSize0 !== undefined ? { estMsSize0: fx.estMsSize0 } : {}),
    ...(fx.sizeBytes !== undefined ? { sizeBytes: fx.sizeBytes } : {}),
  };
}
