// Import of torch FX graph dumps (docs/ARCHITECTURE.md §8) as a StepGraph, so the backends
// can run on a graph PyTorch itself produced. A forward and a backward dump can be joined
// into one step: backward placeholders that name a forward node read that node's tensor;
// backward nodes whose name the forward already used are renamed `<name>.bw`.
// Collectives keep torch's own estimate (`est_ms`). Attention is counted causal.

import { ImportError, err, ok, preview, type Result } from '../errors';
import { Emitter } from './emitter';
import { GraphError } from './errors';
import { numel } from './flops';
import { readFxDump, type FxDump, type FxNode } from './fx_schema';
import { checkViewShape, computeFlops, getitemClaims, type Claim } from './fx_shapes';
import { inferFxLayers } from './fx_layers';
import { classifyTarget } from './fx_targets';
import { DP_GROUP } from './fsdp';
import type { DType, FxGraphBoundary, GraphNode, ParamInfo, Phase, StepGraph } from './types';
import { verifyGraph } from './verify';

/** What an FX name resolves to: its output tensor(s), and for collectives the IR node name. */
interface Ref {
  readonly tensors: readonly string[];
  readonly multi: boolean;
  readonly collective?: string; // IR name of the collective node
  readonly producer?: number; // IR node id, absent for placeholders
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
      try {
        this.convertNode(d, fx, ins, scope, outer, claims, where, at);
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

  private convertNode(
    d: FxDump,
    fx: FxNode,
    ins: Ref[],
    scope: Map<string, Ref>,
    outer: Map<string, Ref> | undefined,
    claims: Map<string, Claim>,
    where: string,
    at: string,
  ): void {
    const e = this.e;
    const bad: (field: string, why: string) => never = (field, why) => {
      throw new ImportError(`${where}.${field}`, `${at}: field '${field}' ${why}`);
    };
    if (fx.op === 'output') {
      this.fxGraphs.push({
        phase: d.graph,
        placeholders: this.placeholders,
        outputs: [...new Set(ins.flatMap((r) => r.tensors))],
      });
      this.placeholders = [];
      return;
    }
    if (fx.op === 'placeholder') {
      const linked = outer?.get(fx.name);
      if (linked) {
        scope.set(fx.name, linked);
        this.placeholders.push(...linked.tensors);
        return;
      }
      if (!fx.shape || !fx.dtype) bad('shape', 'must be a single shape for a placeholder');
      const id = e.tensor(this.irName(fx.name), fx.shape, fx.dtype, { persistent: /^primals_/.test(fx.name) });
      this.placeholders.push(id);
      if ((fx.dtype === 'i32' || fx.dtype === 'i64') && fx.torchDtype !== 'bool' && this.tokensShape === undefined)
        this.tokensShape = fx.shape;
      scope.set(fx.name, { tensors: [id], multi: false });
      return;
    }
    const cls = classifyTarget(fx.target);
    const name = this.irName(fx.name);
    const inTensors = [...new Set(ins.flatMap((r) => r.tensors))];
    const attrs = { target: fx.target };
    const est = torchEstimates(fx);
    const single = (): [readonly number[], DType] => {
      if (!fx.shape || !fx.dtype) bad('shape', `must be a single shape for ${cls} '${fx.target}' (got 'multi')`);
      return [fx.shape, fx.dtype];
    };
    const oneInput = (): string => {
      if (ins.length < 1 || ins[0].tensors.length !== 1)
        bad('args', `must start with one single-tensor node for '${fx.target}'`);
      return ins[0].tensors[0];
    };
    switch (cls) {
      case 'other_collective':
        return bad(
          'target',
          `'${fx.target}' is not supported (collectives: all_gather_into_tensor, reduce_scatter_tensor, wait_tensor)`,
        );
      case 'all_gather':
      case 'reduce_scatter': {
        const [shape, dtype] = single();
        const src = oneInput();
        const t = e.tensors[src];
        const [from, to] = cls === 'all_gather' ? [t.shape, shape] : [shape, t.shape]; // shard, full
        const okShape =
          from.length === to.length &&
          from.length > 0 &&
          to[0] === from[0] * this.n &&
          from.every((v, k) => k === 0 || v === to[k]);
        if (!okShape)
          bad('shape', `${j(shape)} does not fit a ${cls} of ${j(t.shape)} on ${this.n} ranks (dim 0 × world_size)`);
        if (t.dtype !== dtype) bad('dtype', `${dtype} differs from its input's ${t.dtype}`);
        const out = e.tensor(name, shape, dtype);
        if (cls === 'all_gather') this.firstAgDtype ??= dtype;
        else this.firstRsDtype ??= dtype;
        const param = cls === 'all_gather' ? this.traceParam(src, shape) : undefined;
        const node = e.node({
          name,
          kind: cls,
          op: fx.target,
          inputs: [src],
          outputs: [out],
          attrs,
          ...(param ? { params: [param] } : {}),
          collective: {
            kind: cls,
            group: DP_GROUP,
            groupSize: this.n,
            dtype,
            inputBytes: t.bytes,
            outputBytes: e.tensors[out].bytes,
            ...(cls === 'reduce_scatter' ? { reduceOp: 'avg' as const } : {}),
          },
          ...torchEstimates(fx),
        });
        scope.set(fx.name, { tensors: [out], multi: false, collective: name, producer: node.id });
        return;
      }
      case 'wait': {
        const [shape, dtype] = single();
        if (ins.length !== 1 || ins[0].collective === undefined)
          bad('args', 'must name exactly one all_gather / reduce_scatter node (wait on a non-collective)');
        const coll = ins[0].collective as string;
        if (this.waited.has(coll)) bad('args', `waits on '${coll}' a second time`);
        this.waited.add(coll);
        const src = ins[0].tensors[0];
        if (numel(shape) !== numel(e.tensors[src].shape) || dtype !== e.tensors[src].dtype) {
          bad(
            'shape',
            `${j(shape)} ${dtype} differs from its collective's ${j(e.tensors[src].shape)} ${e.tensors[src].dtype}`,
          );
        }
        const out = e.tensor(name, shape, dtype, { aliasOf: src });
        const cNode = e.nodes[ins[0].producer as number];
        const node = e.node({
          name,
          kind: 'wait',
          op: fx.target,
          inputs: [src],
          outputs: [out],
          waitOf: coll,
          attrs,
          ...(cNode.params ? { params: cNode.params } : {}),
          ...est,
        });
        scope.set(fx.name, { tensors: [out], multi: false, producer: node.id });
        return;
      }
      case 'getitem': {
        const [shape, dtype] = single();
        if (ins.length !== 1) bad('args', 'must name exactly one node');
        const r = ins[0];
        const k = r.multi ? claims.get(fx.name)?.index : 0;
        if (k === undefined) bad('shape', `${j(shape)} matches no output of '${fx.args[0]}'`);
        const src = r.tensors[k as number];
        const out = e.tensor(name, shape, dtype, { aliasOf: src });
        const node = e.node({ name, kind: 'view', op: fx.target, inputs: [src], outputs: [out], attrs, ...est });
        scope.set(fx.name, { tensors: [out], multi: false, producer: node.id });
        return;
      }
      case 'view':
      case 'cast': {
        const [shape, dtype] = single();
        const src = oneInput();
        checkViewShape(cls, fx, e.tensors[src].shape, bad);
        const out = e.tensor(name, shape, dtype, cls === 'view' ? { aliasOf: src } : undefined);
        const bytes = cls === 'cast' ? e.tensors[src].bytes + e.tensors[out].bytes : 0;
        const node = e.node({
          name,
          kind: cls,
          op: fx.target,
          inputs: inTensors,
          outputs: [out],
          bytesMoved: bytes,
          flops: cls === 'cast' ? numel(shape) : 0,
          attrs,
          ...est,
        });
        scope.set(fx.name, { tensors: [out], multi: false, producer: node.id });
        return;
      }
      default: {
        const outs = this.outputsOf(fx, name, ins, claims);
        const flops = computeFlops(
          cls,
          fx,
          ins.map((r) => (r.tensors.length === 1 ? e.tensors[r.tensors[0]].shape : undefined)),
          bad,
        );
        let bytes = 0;
        for (const t of [...inTensors, ...outs]) bytes += e.tensors[t].bytes;
        const op = cls === 'compute' ? fx.target : cls;
        // torch's own classification, where the dump carries it, decides what counts as compute
        const matmulLike = fx.kind !== undefined ? fx.kind === 'compute' : cls !== 'compute';
        const node = e.node({
          name,
          kind: 'compute',
          op,
          inputs: inTensors,
          outputs: outs,
          flops,
          bytesMoved: bytes,
          matmulLike,
          attrs,
          ...est,
        });
        scope.set(fx.name, { tensors: outs, multi: fx.multi !== undefined, producer: node.id });
      }
    }
  }

  /** Output tensors of a compute node; a multi-output node's dtypes come from its getitems. */
  private outputsOf(fx: FxNode, name: string, ins: Ref[], claims: Map<string, Claim>): string[] {
    if (!fx.multi) return [this.e.tensor(name, fx.shape as number[], fx.dtype as DType)];
    const dflt: DType = ins.length > 0 && ins[0].tensors.length > 0 ? this.e.tensors[ins[0].tensors[0]].dtype : 'fp32';
    const dtypes = new Map<number, DType>();
    for (const cl of claims.values())
      if (cl.source === fx.name && !dtypes.has(cl.index)) dtypes.set(cl.index, cl.dtype);
    return fx.multi.map((s, k) => this.e.tensor(`${name}.${k}`, s, dtypes.get(k) ?? dflt));
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
