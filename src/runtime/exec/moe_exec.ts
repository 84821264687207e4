// The MoE nodes of a step graph in live mode (graph/moe.ts): router_topk, the permutes, the combine,
// grouped_mm and the ep all-to-alls. Their sizes depend on the data — how many rows each expert got —
// so they run on the host (CPU reference kernels) over tensors sized to the rows actually routed, not
// the graph's worst case. Every tensor of routed rows is tracked with its row space:
//   sorted  [T·k, D] this rank's picks sorted by global expert (dispatch.permute's output);
//   arrived [R, D]   rows the dispatch all-to-all delivered, source-major;
//   expert  [R, D]   the same rows expert-major, each local expert's rows contiguous.
// A permute maps tokens → sorted (by the picks), arrived → expert and expert → arrived (dispatch.ts's
// regrouping); an all-to-all sends sorted → arrived (dispatch) or arrived → sorted (combine). Elementwise
// ops on routed rows (swiglu, the gradient adds) run on the rank's kernels with n scaled to the rows.

import type { GraphNode, StepGraph } from '../../graph';
import { FsdpSimError } from '../../errors';
import {
  combineRows,
  combineRowsBwd,
  expertOrder,
  gatherRows,
  groupedMatmul,
  groupedMatmulBwdW,
  groupedMatmulBwdX,
  moeRouter,
  moeRouterBwd,
  type ExpertOrder,
} from '../cpu';
import type { DeviceTensor, ElemType, HostArray, KernelBackend, OpAttrs } from '../kernels';
import { dispatchPlanOf, exchangeCounts, exchangeRows, type DispatchPlan } from '../moe_dispatch';
import type { ExecComm } from './collectives';
import { elemTypeOf, elemsOf } from './plan';

type RowSpace = 'sorted' | 'arrived' | 'expert';

/** One router's picks on this rank, and (ep > 1) the plan its count all-to-all made. */
interface Routing {
  readonly ids: Int32Array; // [T, k]
  readonly order: ExpertOrder;
  readonly tokens: number;
  readonly topK: number;
  plan?: DispatchPlan;
}

interface Routed {
  readonly space: RowSpace;
  readonly routing: Routing;
}

/** Makes (and hands to the step) a tensor of `elems` elements. */
export type CreateTensor = (id: string, elems: number, type: ElemType) => DeviceTensor;

const HOST_OPS: ReadonlySet<string> = new Set([
  'router_topk',
  'router_topk_bwd',
  'moe_permute',
  'moe_scatter_add',
  'moe_combine_bwd',
  'grouped_mm',
]);

/** Whether the executor runs `op` on the host CPU kernels, whatever the rank's kernel backend (the MoE ops). */
export const runsOnHost = (op: string | undefined): boolean => HOST_OPS.has(op ?? '');
/** Row-wise ops that also run on routed rows: attrs.n counts elements. */
const ROW_WISE_OPS = new Set(['swiglu', 'swiglu_bwd', 'add', 'copy']);

const hostArray = (t: DeviceTensor): HostArray =>
  t.type === 'i32' ? new Int32Array(t.length) : new Float32Array(t.length);

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
    if (runsOnHost(node.op)) return true;
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
    const host = await this.download(ins);
    switch (node.op) {
      case 'router_topk':
        return this.router(node, host);
      case 'router_topk_bwd':
        return this.routerBwd(node, host);
      case 'moe_permute':
        return this.permute(node, host);
      case 'moe_scatter_add':
        return this.scatterAdd(node, host);
      case 'moe_combine_bwd':
        return this.combineBwd(node, host);
      case 'grouped_mm':
        return this.groupedMm(node, host);
    }
    throw this.error(node, `is not a MoE op (${node.op})`);
  }

  /** The ep all-to-all: the per-expert counts (then this rank's dispatch plan), or routed rows. */
  async allToAll(node: GraphNode, ins: readonly DeviceTensor[], comm: ExecComm): Promise<void> {
    const [input] = node.inputs;
    const [host] = await this.download(ins);
    if (this.graph.tensors[input]?.dtype === 'i32') {
      const routing = this.routingOf(node, input);
      const recv = exchangeCounts(comm, routing.order.counts, node.name);
      routing.plan = dispatchPlanOf(routing.order, recv, comm.worldSize);
      return this.upload(node.outputs[0], recv);
    }
    const from = this.routedOf(node, input);
    if (from.space === 'expert') throw this.error(node, 'sends expert-major rows; the graph regroups them first');
    const direction = from.space === 'sorted' ? 'dispatch' : 'combine';
    const plan = this.planOf(node, from.routing);
    const rows = exchangeRows(comm, plan, host as Float32Array, this.cols(input), direction, node.name);
    const space = direction === 'dispatch' ? 'arrived' : 'sorted';
    this.upload(node.outputs[0], rows, { space, routing: from.routing });
  }

  /** softmax → top k → scores, ids, and the tokens each expert got. */
  private router(node: GraphNode, [logits]: HostArray[]): void {
    const [T, k, E] = ['T', 'k', 'E'].map((a) => Number(node.attrs?.[a]));
    const gates = new Float32Array(T * k);
    const ids = new Int32Array(T * k);
    moeRouter(logits as Float32Array, gates, ids, { tokens: T, experts: E, topK: k });
    const routing: Routing = { ids, order: expertOrder(ids, T, k, E), tokens: T, topK: k };
    const [scores, idsId, counts] = node.outputs;
    this.routings.set(idsId, routing).set(counts, routing);
    this.upload(scores, gates);
    this.upload(idsId, ids);
    this.upload(counts, routing.order.counts);
  }

  /** dLogits from dScores; the gates are the forward's, recomputed from the same logits (same bits). */
  private routerBwd(node: GraphNode, [dScores, logits]: HostArray[]): void {
    const routing = this.routingOf(node, node.inputs[2]);
    const dims = { tokens: routing.tokens, experts: Number(node.attrs?.E), topK: routing.topK };
    const gates = new Float32Array(dims.tokens * dims.topK);
    moeRouter(logits as Float32Array, gates, new Int32Array(gates.length), dims);
    const dLogits = new Float32Array(dims.tokens * dims.experts);
    moeRouterBwd(dScores as Float32Array, gates, routing.ids, dLogits, dims);
    this.upload(node.outputs[0], dLogits);
  }

  /** Rows gathered: tokens → sorted by the picks, arrived ↔ expert by the dispatch plan. */
  private permute(node: GraphNode, [x]: HostArray[]): void {
    const routing = this.routingOf(node, node.inputs[1]);
    const from = this.routed.get(node.inputs[0]);
    const cols = this.cols(node.inputs[0]);
    const { index, space, srcRows } = this.permutation(node, routing, from?.space);
    const y = new Float32Array(index.length * cols);
    gatherRows(x as Float32Array, index, y, { rows: index.length, cols, srcRows });
    this.upload(node.outputs[0], y, { space, routing });
  }

  private permutation(node: GraphNode, routing: Routing, from: RowSpace | undefined) {
    if (from === undefined) return { index: routing.order.rowOf, space: 'sorted' as const, srcRows: routing.tokens };
    if (from === 'sorted') throw this.error(node, 'permutes rows already sorted by expert');
    const plan = this.planOf(node, routing);
    const index = from === 'arrived' ? plan.toExpertMajor : plan.toSourceMajor;
    return { index, space: from === 'arrived' ? ('expert' as const) : ('arrived' as const), srcRows: plan.localRows };
  }

  /** Sorted rows summed back to their tokens, weighted by the scores when given (the combine). */
  private scatterAdd(node: GraphNode, [y, , scores]: HostArray[]): void {
    const routing = this.sortedRouting(node, node.inputs[0], node.inputs[1]);
    const cols = this.cols(node.inputs[0]);
    const out = new Float32Array(routing.tokens * cols);
    const dims = { tokens: routing.tokens, topK: routing.topK, cols, srcRows: routing.tokens * routing.topK };
    combineRows(y as Float32Array, routing.order.posOf, (scores as Float32Array | undefined) ?? null, out, dims);
    this.upload(node.outputs[0], out);
  }

  /** The combine's backward: the sorted rows' gradient and the scores'. */
  private combineBwd(node: GraphNode, [dOut, y, scores]: HostArray[]): void {
    const routing = this.sortedRouting(node, node.inputs[1], node.inputs[3]);
    const cols = this.cols(node.inputs[1]);
    const rows = routing.tokens * routing.topK;
    const dY = new Float32Array(rows * cols);
    const dScores = new Float32Array(rows);
    const dims = { tokens: routing.tokens, topK: routing.topK, cols, srcRows: rows };
    combineRowsBwd(
      dOut as Float32Array,
      y as Float32Array,
      routing.order.posOf,
      scores as Float32Array,
      dY,
      dScores,
      dims,
    );
    this.upload(node.outputs[0], dY, { space: 'sorted', routing });
    this.upload(node.outputs[1], dScores);
  }

  /**
   * torch._grouped_mm over each expert's rows: C = A·B_eᵀ (transB, B [E, N, K]), C = A·B_e (B [E, K, N]),
   * or the weight gradient C_e = A_eᵀ·B_e (transA) — the CPU kernels' forms with the operands renamed.
   */
  private groupedMm(node: GraphNode, [a, b]: HostArray[]): void {
    const A = this.routedOf(node, node.inputs[0]);
    const offsets = this.offsetsOf(node, A);
    const [M, N, K] = ['M', 'N', 'K'].map((d) => Number(node.attrs?.[d]));
    const rows = offsets[offsets.length - 1];
    const experts = offsets.length - 1;
    const f = (x: HostArray) => x as Float32Array;
    if (node.attrs?.transA === true) {
      // A = dY [R, M], B = x [R, N] → C [E, M, N]
      const out = new Float32Array(elemsOf(this.graph.tensors, node.outputs[0]));
      groupedMatmulBwdW(f(b), f(a), offsets, out, { rows, experts, K: M, N });
      return this.upload(node.outputs[0], out);
    }
    const out = new Float32Array(rows * N);
    if (node.attrs?.transB === true) groupedMatmulBwdX(f(a), f(b), offsets, out, { rows, experts, K: N, N: K });
    else groupedMatmul(f(a), f(b), offsets, out, { rows, experts, K, N });
    this.upload(node.outputs[0], out, A);
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

  private async download(ins: readonly DeviceTensor[]): Promise<HostArray[]> {
    const host = ins.map(hostArray);
    await this.kernels.downloadAll(ins.map((t, i) => ({ t, into: host[i] })));
    return host;
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
