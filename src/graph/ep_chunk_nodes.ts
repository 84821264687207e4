// The nodes graph_trainer's EP chunking makes (torchtitan b5bcd76,
// experiments/graph_trainer/ep_chunk_pass.py): one body node copied for a chunk, a live-in split
// into two chunks, a live-out materialized from them. Tokens lie batch-major along dim 0 of every
// token tensor here (rows are `batch · seqLen` tokens), so a chunk is the first or second half of
// dim 0: chunk 0 takes the larger half of an odd extent (routed rows under skew), sums stay exact.

import { ioBytes, numel, tensorBytes } from './flops';
import { GraphError } from './graph_errors';
import type { GraphNode, TensorInfo } from './types';

export type ChunkId = 0 | 1;
export const CHUNK_IDS: readonly ChunkId[] = [0, 1];

/** The chunk's share of an extent: the larger half for chunk 0. */
const halfOf = (extent: number, c: ChunkId): number => (c === 0 ? Math.ceil(extent / 2) : Math.floor(extent / 2));

export const chunkName = (name: string, c: ChunkId): string => `${name}.chunk${c}`;

type Tensors = Record<string, TensorInfo>;

/** What a copied body node reads and writes, its region, and its token-exchange label if it is one. */
export interface ChunkIo {
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  readonly region: string;
  /** ep_overlap_pass.py's EP_token_exchange label: 'dispatch' or 'combine' (the counts exchange has none). */
  readonly exchange?: string;
}

/** Attributes counting tokens (or routed rows) in the ops of a chunked body (graph/ops.ts). */
const TOKEN_ATTRS = ['rows', 'n', 'T', 'rowsIn', 'rowsOut'] as const;

/** `n`'s attrs for chunk `c`: its token extents halved, marked with the chunk and its region. */
function chunkAttrs(n: GraphNode, c: ChunkId, io: ChunkIo, seqChunks: boolean): GraphNode['attrs'] {
  const a: Record<string, number | string | boolean> = { ...n.attrs, chunk: c, chunkRegion: io.region };
  if (io.exchange !== undefined) a.epTokenExchange = io.exchange;
  const half = (k: string) => {
    if (typeof a[k] === 'number') a[k] = halfOf(a[k] as number, c);
  };
  if (n.op === 'matmul' || n.op === 'grouped_mm') half(a.transA === true ? 'K' : 'M');
  else if (n.op === 'attention' || n.op === 'attention_bwd') {
    // ep_chunk_pass.py refuses it too: "seq chunking through attention needs full-K/V handling"
    if (seqChunks) throw new GraphError(`seq chunking through attention (${n.name}) is not supported`);
    half('batch');
  } else for (const k of TOKEN_ATTRS) half(k);
  return a;
}

/** A tensor's chunk: its token dim halved when it has one, else the full shape (a partial gradient, counts). */
export function chunkTensor(t: TensorInfo, c: ChunkId, tokens: boolean, aliasOf?: string): TensorInfo {
  const shape = tokens ? [halfOf(t.shape[0] ?? 1, c), ...t.shape.slice(1)] : [...t.shape];
  const out: TensorInfo = { id: chunkName(t.id, c), shape, dtype: t.dtype, bytes: tensorBytes(shape, t.dtype) };
  return aliasOf === undefined ? out : { ...out, aliasOf };
}

/**
 * Body node `n` for chunk `c`, reading `inputs` and writing `outputs` (chunk tensors already in
 * `tensors`): half its FLOPs (every body op is linear in its tokens), its bytes scaled by what its
 * tensors now hold (shared weights are read in full by each chunk), a collective's bytes likewise.
 */
export function chunkNode(n: GraphNode, c: ChunkId, io: ChunkIo, tensors: Tensors, seqChunks: boolean): GraphNode {
  const before = ioBytes(tensors, [...n.inputs, ...n.outputs]);
  const after = ioBytes(tensors, [...io.inputs, ...io.outputs]);
  const scale = (b: number) => (before > 0 ? (b * after) / before : b / 2);
  const ratio = (from: string, to: string) => (tensors[from].bytes > 0 ? tensors[to].bytes / tensors[from].bytes : 1);
  const col = n.collective;
  return {
    ...n,
    name: chunkName(n.name, c),
    inputs: io.inputs,
    outputs: io.outputs,
    flops: n.flops / 2,
    bytesMoved: scale(n.bytesMoved),
    attrs: chunkAttrs(n, c, io, seqChunks),
    ...(n.waitOf !== undefined ? { waitOf: chunkName(n.waitOf, c) } : {}),
    ...(col !== undefined
      ? {
          collective: {
            ...col,
            inputBytes: col.inputBytes * ratio(n.inputs[0], io.inputs[0]),
            outputBytes: col.outputBytes * ratio(n.outputs[0], io.outputs[0]),
          },
        }
      : {}),
  };
}

type Boundary = Pick<GraphNode, 'phase' | 'layer'>;

/**
 * Live-in `t` split into its two chunks: along the batch a view (torch.split on dim 0 is
 * contiguous), along the sequence a contiguous copy per chunk (ep_eager_chunk.py `.contiguous()`).
 */
export function splitNodes(t: TensorInfo, seqChunks: boolean, at: Boundary, tensors: Tensors): GraphNode[] {
  const base = { ...at, id: -1, flops: 0, matmulLike: false, inputs: [t.id] };
  if (!seqChunks) {
    for (const c of CHUNK_IDS) tensors[chunkName(t.id, c)] = chunkTensor(t, c, true, t.id);
    const outputs = CHUNK_IDS.map((c) => chunkName(t.id, c));
    return [{ ...base, name: `${t.id}.split`, kind: 'view', op: 'split', outputs, bytesMoved: 0 }];
  }
  return CHUNK_IDS.map((c) => {
    const y = chunkTensor(t, c, true);
    tensors[y.id] = y;
    const attrs = { n: numel(y.shape) };
    return {
      ...base,
      name: `${t.id}.split${c}`,
      kind: 'compute',
      op: 'copy',
      outputs: [y.id],
      bytesMoved: 2 * y.bytes,
      attrs,
    };
  });
}

/**
 * Live-out `t` made whole again for a reader outside the body: the two partial gradients of a
 * parameter added (ep_chunk_pass.py: `add` for parameter-gradient reductions), else the halves
 * concatenated (`cat`, a copy here).
 */
export function materializeNode(t: TensorInfo, paramGrad: boolean, at: Boundary, tensors: Tensors): GraphNode {
  const inputs = CHUNK_IDS.map((c) => chunkName(t.id, c));
  const bytesMoved = ioBytes(tensors, inputs) + t.bytes;
  const n = numel(t.shape);
  const common = { ...at, id: -1, kind: 'compute', matmulLike: false, inputs, outputs: [t.id], bytesMoved } as const;
  return paramGrad
    ? { ...common, name: `${t.id}.chunk_add`, op: 'add', flops: n, attrs: { n } }
    : { ...common, name: `${t.id}.cat`, op: 'copy', flops: 0, attrs: { n } };
}
