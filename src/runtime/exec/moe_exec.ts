// The MoE nodes of a step graph in live mode (graph/moe.ts): router_topk, the permutes, the combine,
// grouped_mm and the ep all-to-alls. Their sizes depend on the data — how many rows each expert got —
// so the host plans them: it reads the router's picks back (T·k ids), orders them by expert, exchanges
// the counts and plans the all-to-all splits, then runs each MoE kernel (cpu/moe_ops.ts) through the
// rank's own KernelBackend — WGSL on a WebGPU rank — over tensors sized to the rows actually routed, not
// the graph's worst case, with the plan's index tensors uploaded. Only the all-to-all moves rows through
// host arrays (the SAB communicator's). Every tensor of routed rows is tracked with its row space:
//   sorted  [T·k, D] this rank's picks sorted by global expert (dispatch.permute's output);
//   arrived [R, D]   rows the dispatch all-to-all delivered, source-major;
//   expert  [R, D]   the same rows expert-major, each local expert's rows contiguous.
// A permute maps tokens → sorted (by the picks), arrived → expert and expert → arrived (dispatch.ts's
// regrouping); an all-to-all sends sorted → arrived (dispatch) or arrived → sorted (combine). Elementwise
// ops on routed rows (swiglu, the gradient adds) run on the rank's kernels with n scaled to the rows.

import { isMoeOp, type GraphNode, type StepGraph } from '../../graph';
import { FsdpSimError } from '../../errors';
import { expertOrder, type ExpertOrder, type MoeKernelOp } from '../cpu';
import type { DeviceTensor, ElemType, KernelBackend, OpAttrs } from '../kernels';
import { dispatchPlanOf, exchangeCounts, exchangeRows, type DispatchPlan } from '../moe_dispatch';
import type { ExecComm } from './collectives';
import { elemTypeOf, elemsOf } from './plan';

type RowSpace = 'sorted' | 'arrived' | 'expert';

/** One router's picks on this rank ordered by expert, and (ep > 1) the plan its count all-to-all made. */
interface Routing {
  readonly order: ExpertOrder;
  readonly tokens: number;
  readonly topK: number;
  plan?: DispatchPlan;
}

interface Routed {
  readonly space: RowSpace;
  readonly routing: Routing;
}

/** One output of a MoE kernel: its id, its elements, and its row space when it holds routed rows. */
interface Out {
  readonly id: string;
  readonly elems: number;
  readonly routed?: Routed;
  readonly type?: ElemType; // a scratch output's (else the graph tensor's)
}

/** Makes (and hands to the step) a tensor of `elems` elements. */
export type CreateTensor = (id: string, elems: number, type: ElemType) => DeviceTensor;

/** The MoE kernels (cpu/moe_ops.ts) a MoE node runs, in order: what the backend compiles before step 1. */
export function moeKernelsOf(node: GraphNode): MoeKernelOp[] {
  switch (node.op) {
    case 'router_topk':
      return ['moe_router'];
    case 'router_topk_bwd':
      return ['moe_router', 'moe_router_bwd']; // the gates recomputed, then the backward
    case 'moe_permute':
      return ['gather_rows'];
    case 'moe_scatter_add':
      return [node.inputs.length > 2 ? 'combine_rows' : 'scatter_add_rows']; // weighted by the scores when given
    case 'moe_combine_bwd':
      return ['combine_rows_bwd'];
    case 'grouped_mm':
      return [
        node.attrs?.transA === true
          ? 'grouped_matmul_bwd_w'
          : node.attrs?.transB === true
            ? 'grouped_matmul_bwd_x'
            : 'grouped_matmul',
      ];
  }
  return [];
}

/** Row-wise ops that also run on routed rows: attrs.n counts elements. */
const ROW_WISE_OPS = new Set(['swiglu', 'swiglu_bwd', 'add', 'copy']);

/** One step's MoE state on one rank. */
export class MoeRunner {
  private readonly routings = new Map<string, Routing>(); // ids or counts tensor id → routing
  private readonly routed = new Map<string, Routed>(); // tensor id → its row space

  constructor(
    private readonly graph: StepGraph,
    private readonly kernels: KernelBackend,
    private readonly create: CreateTensor,
  ) {}

  /** Whether node is this runner's to run (a MoE op, or a row-wise op on routed rows). */
  owns(node: GraphNode): boolean {
    if (isMoeOp(node.op)) return true;
    const onRouted = node.inputs.some((id) => this.routed.has(id));
    if (onRouted && !ROW_WISE_OPS.has(node.op ?? '')) {
      throw this.error(node, `reads routed rows, but only ${[...ROW_WISE_OPS].join(', ')} and the MoE ops may`);
    }
    return onRouted;
  }

  /** A wait's output is its input: the same rows. */
  alias(from: string, to: string): void {
    const r = this.routed.get(from);
    if (r !== undefined) this.routed.set(to, r);
  }

  async compute(node: GraphNode, ins: readonly DeviceTensor[]): Promise<void> {
    if (ROW_WISE_OPS.has(node.op ?? '')) return this.rowWise(node, ins);
    switch (node.op) {
      case 'router_topk':
        return this.router(node, ins);
      case 'router_topk_bwd':
        return this.routerBwd(node, ins);
      case 'moe_permute':
        return this.permute(node, ins);
      case 'moe_scatter_add':
        return this.scatterAdd(node, ins);
      case 'moe_combine_bwd':
        return this.combineBwd(node, ins);
      case 'grouped_mm':
        return this.groupedMm(node, ins);
    }
    throw this.error(node, `is not a MoE op (${node.op})`);
  }

  /** The ep all-to-all: the per-expert counts (then this rank's dispatch plan), or routed rows. */
  async allToAll(node: GraphNode, ins: readonly DeviceTensor[], comm: ExecComm): Promise<void> {
    const [input] = node.inputs;
    if (this.graph.tensors[input]?.dtype === 'i32') {
      // the counts are the host's own (from the router's picks, read back): nothing to download
      const routing = this.routingOf(node, input);
      const recv = exchangeCounts(comm, routing.order.counts, node.name);
      routing.plan = dispatchPlanOf(routing.order, recv, comm.worldSize);
      return this.upload(node.outputs[0], recv);
    }
    const from = this.routedOf(node, input);
    if (from.space === 'expert') throw this.error(node, 'sends expert-major rows; the graph regroups them first');
    const direction = from.space === 'sorted' ? 'dispatch' : 'combine';
    const plan = this.planOf(node, from.routing);
    const host = new Float32Array(ins[0].length);
    await this.kernels.download(ins[0], host);
    const rows = exchangeRows(comm, plan, host, this.cols(input), direction, node.name);
    const space = direction === 'dispatch' ? 'arrived' : 'sorted';
    this.upload(node.outputs[0], rows, { space, routing: from.routing });
  }

  /** softmax → top k → scores and ids on the rank's kernels; the ids read back give the tokens each expert got. */
  private async router(node: GraphNode, [logits]: readonly DeviceTensor[]): Promise<void> {
    const [T, k, E] = ['T', 'k', 'E'].map((a) => Number(node.attrs?.[a]));
    const [scores, idsId, counts] = node.outputs;
    const outs = [
      { id: scores, elems: T * k },
      { id: idsId, elems: T * k },
    ];
    const [, idsT] = this.runKernel('moe_router', { tokens: T, experts: E, topK: k }, [logits], outs);
    const ids = new Int32Array(T * k);
    await this.kernels.download(idsT, ids);
    const routing: Routing = { order: expertOrder(ids, T, k, E), tokens: T, topK: k };
    this.routings.set(idsId, routing).set(counts, routing);
    this.upload(counts, routing.order.counts);
  }

  /** dLogits from dScores; the gates are the forward's, recomputed from the same logits (same bits). */
  private routerBwd(node: GraphNode, [dScores, logits, ids]: readonly DeviceTensor[]): void {
    const routing = this.routingOf(node, node.inputs[2]);
    const attrs = { tokens: routing.tokens, experts: Number(node.attrs?.E), topK: routing.topK };
    const [out] = node.outputs;
    const picks = routing.tokens * routing.topK;
    const scratch = [
      { id: `${out}#gates`, elems: picks },
      { id: `${out}#ids`, elems: picks, type: 'i32' as const },
    ];
    const [gates] = this.runKernel('moe_router', attrs, [logits], scratch);
    const dLogits = { id: out, elems: routing.tokens * attrs.experts };
    this.runKernel('moe_router_bwd', attrs, [dScores, gates, ids], [dLogits]);
  }

  /** Rows gathered: tokens → sorted by the picks, arrived ↔ expert by the dispatch plan. */
  private permute(node: GraphNode, [x]: readonly DeviceTensor[]): void {
    const routing = this.routingOf(node, node.inputs[1]);
    const from = this.routed.get(node.inputs[0]);
    const cols = this.cols(node.inputs[0]);
    const { index, space, srcRows } = this.permutation(node, routing, from?.space);
    const [out] = node.outputs;
    const attrs = { rows: index.length, cols, srcRows };
    const y = { id: out, elems: index.length * cols, routed: { space, routing } };
    this.runKernel('gather_rows', attrs, [x, this.indexTensor(out, 'index', index)], [y]);
  }

  private permutation(node: GraphNode, routing: Routing, from: RowSpace | undefined) {
    if (from === undefined) return { index: routing.order.rowOf, space: 'sorted' as const, srcRows: routing.tokens };
    if (from === 'sorted') throw this.error(node, 'permutes rows already sorted by expert');
    const plan = this.planOf(node, routing);
    const index = from === 'arrived' ? plan.toExpertMajor : plan.toSourceMajor;
    return { index, space: from === 'arrived' ? ('expert' as const) : ('arrived' as const), srcRows: plan.localRows };
  }

  /** The combine's dims over `routing`'s sorted rows of `cols` elements. */
  private combineAttrs(routing: Routing, cols: number): OpAttrs {
    return { tokens: routing.tokens, topK: routing.topK, cols, srcRows: routing.tokens * routing.topK };
  }

  /** Sorted rows summed back to their tokens, weighted by the scores when given (the combine). */
  private scatterAdd(node: GraphNode, [y, , scores]: readonly DeviceTensor[]): void {
    const routing = this.sortedRouting(node, node.inputs[0], node.inputs[1]);
    const cols = this.cols(node.inputs[0]);
    const [out] = node.outputs;
    const posOf = this.indexTensor(out, 'posOf', routing.order.posOf);
    const attrs = this.combineAttrs(routing, cols);
    const [op] = moeKernelsOf(node);
    const ins = op === 'combine_rows' ? [y, posOf, scores] : [y, posOf];
    this.runKernel(op, attrs, ins, [{ id: out, elems: routing.tokens * cols }]);
  }

  /** The combine's backward: the sorted rows' gradient and the scores'. */
  private combineBwd(node: GraphNode, [dOut, y, scores]: readonly DeviceTensor[]): void {
    const routing = this.sortedRouting(node, node.inputs[1], node.inputs[3]);
    const cols = this.cols(node.inputs[1]);
    const rows = routing.tokens * routing.topK;
    const [dY, dScores] = node.outputs;
    const posOf = this.indexTensor(dY, 'posOf', routing.order.posOf);
    const outs = [
      { id: dY, elems: rows * cols, routed: { space: 'sorted' as const, routing } },
      { id: dScores, elems: rows },
    ];
    this.runKernel('combine_rows_bwd', this.combineAttrs(routing, cols), [dOut, y, posOf, scores], outs);
  }

  /**
   * torch._grouped_mm over each expert's rows: C = A·B_eᵀ (transB, B [E, N, K]), C = A·B_e (B [E, K, N]),
   * or the weight gradient C_e = A_eᵀ·B_e (transA) — the MoE kernels' forms with the operands renamed.
   */
  private groupedMm(node: GraphNode, [a, b]: readonly DeviceTensor[]): void {
    const A = this.routedOf(node, node.inputs[0]);
    const offsets = this.offsetsOf(node, A);
    const [M, N, K] = ['M', 'N', 'K'].map((d) => Number(node.attrs?.[d]));
    const [out] = node.outputs;
    const dims = { rows: offsets[offsets.length - 1], experts: offsets.length - 1 };
    const offsetsT = this.indexTensor(out, 'offsets', offsets);
    const [op] = moeKernelsOf(node);
    if (op === 'grouped_matmul_bwd_w') {
      // A = dY [R, M], B = x [R, N] → C [E, M, N]
      const dW = { id: out, elems: elemsOf(this.graph.tensors, out) };
      this.runKernel(op, { ...dims, K: M, N }, [b, a, offsetsT], [dW]);
      return;
    }
    const c = { id: out, elems: dims.rows * N, routed: A };
    const kn = op === 'grouped_matmul_bwd_x' ? { K: N, N: K } : { K, N };
    this.runKernel(op, { ...dims, ...kn }, [a, b, offsetsT], [c]);
  }

  /** Each group's row range: the global experts' (sorted rows, ep = 1) or this rank's experts' (expert-major). */
  private offsetsOf(node: GraphNode, A: Routed): Int32Array {
    const offsets =
      A.space === 'sorted'
        ? A.routing.order.offsets
        : A.space === 'expert'
          ? this.planOf(node, A.routing).localOffsets
          : undefined;
    const groups = Number(node.attrs?.groups);
    if (offsets === undefined || offsets.length - 1 !== groups) {
      const got = (offsets?.length ?? 1) - 1;
      throw this.error(node, `multiplies ${A.space} rows in ${got} groups, but the node has ${groups}`);
    }
    return offsets;
  }

  /** A row-wise kernel on routed rows: n scaled from the graph's rows to the routed ones. */
  private rowWise(node: GraphNode, ins: readonly DeviceTensor[]): void {
    const r = this.routedOf(node, node.inputs.find((id) => this.routed.has(id)) ?? node.inputs[0]);
    const graphElems = elemsOf(this.graph.tensors, node.outputs[0]);
    const n = this.rowsOf(node, r) * this.cols(node.outputs[0]);
    const attrs: OpAttrs = { ...node.attrs, n: (Number(node.attrs?.n) / graphElems) * n };
    const outs = node.outputs.map((id) => this.createRouted(id, n, r));
    this.kernels.run(node.op as 'add', attrs, ins, outs);
  }

  private rowsOf(node: GraphNode, r: Routed): number {
    return r.space === 'sorted' ? r.routing.tokens * r.routing.topK : this.planOf(node, r.routing).localRows;
  }

  /** Elements per row of a graph tensor (its shape past dim 0). */
  private cols(id: string): number {
    return this.graph.tensors[id].shape.slice(1).reduce((x, y) => x * y, 1);
  }

  private createRouted(id: string, elems: number, r?: Routed): DeviceTensor {
    if (r !== undefined) this.routed.set(id, r);
    return this.create(id, elems, elemTypeOf(this.graph.tensors, id));
  }

  private upload(id: string, data: Float32Array | Int32Array, r?: Routed): void {
    const t = this.createRouted(id, data.length, r);
    this.kernels.upload(t, data);
  }

  /** A host index array as an i32 tensor of this step, `of` the output it serves (`ID#what`). */
  private indexTensor(of: string, what: string, data: Int32Array): DeviceTensor {
    const t = this.create(`${of}#${what}`, data.length, 'i32');
    this.kernels.upload(t, data);
    return t;
  }

  /** Creates `outs` (routed rows where `routed` says) and runs MoE kernel `op` on the rank's backend. */
  private runKernel(op: MoeKernelOp, attrs: OpAttrs, ins: readonly DeviceTensor[], outs: readonly Out[]) {
    const tensors = outs.map((o) =>
      o.type === undefined ? this.createRouted(o.id, o.elems, o.routed) : this.create(o.id, o.elems, o.type),
    );
    this.kernels.run(op, attrs, ins, tensors);
    return tensors;
  }

  private routingOf(node: GraphNode, id: string): Routing {
    const r = this.routings.get(id);
    if (r === undefined) throw this.error(node, `reads '${id}', which no router of this step produced`);
    return r;
  }

  private routedOf(node: GraphNode, id: string): Routed {
    const r = this.routed.get(id);
    if (r === undefined) throw this.error(node, `reads '${id}' as routed rows, but no MoE op produced it`);
    return r;
  }

  /** The routing of sorted rows `rows`, which must be the one of the picks `ids`. */
  private sortedRouting(node: GraphNode, rows: string, ids: string): Routing {
    const r = this.routedOf(node, rows);
    const routing = this.routingOf(node, ids);
    if (r.space !== 'sorted' || r.routing !== routing) {
      throw this.error(node, `reads '${rows}' (${r.space} rows) where rows sorted by the picks '${ids}' belong`);
    }
    return routing;
  }

  private planOf(node: GraphNode, routing: Routing): DispatchPlan {
    if (routing.plan === undefined) throw this.error(node, 'runs before the count all-to-all that plans its rows');
    return routing.plan;
  }

  private error(node: GraphNode, what: string): FsdpSimError {
    return new FsdpSimError('runtime', `node ${node.id} '${node.name}' ${what}`);
  }
}
