// Memory as torch reports it: the CUDA caching allocator's peak *allocated* and peak *reserved*
// bytes of one rank running a schedule. torchtitan logs max_memory_reserved (its "memory: X GiB");
// torch.cuda.max_memory_allocated is the allocated peak. Follows c10/cuda/CUDACachingAllocator.cpp
// with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, which torchtitan's run_train.sh sets:
//  - requests round up to 512 B (kMinBlockSize); ≤ 1 MiB goes to the small pool, the rest to the
//    large pool; each (pool, stream) is one expandable segment mapped in 2 MiB pages;
//  - a request takes the best-fitting cached free block of its pool and stream (smallest that fits,
//    lowest address on a tie) and splits off the rest; freed blocks merge with free neighbours;
//  - with no fitting block the segment grows at its end (a free tail block is extended); mapped
//    pages stay reserved until empty_cache, so reserved = Σ high-water extents of the segments.
// Fragmentation appears when gathered parameters, activations and gradients are freed in another
// order than they were allocated: a later, larger request finds no hole and grows the segment.
// The allocator sees allocations in CPU issue order (program order of the schedule), not in GPU
// time, so it reads the schedule's positions (liveIntervals), not the simulator's clock.
// Departures: one segment per (pool, stream) instead of many; no record_stream delays (a block
// freed on another stream is reusable once its last reader's position is passed).

import { bisector } from 'd3-array';
import type { GraphNode, StepGraph } from '../graph';
import { baseOf, liveIntervals, persistentBytes } from './memory';
import { hiddenTensors } from './hidden_tensors';

const MIN_BLOCK = 512; // bytes, kMinBlockSize
const SMALL_SIZE = 1 << 20; // bytes, kSmallSize: ≤ 1 MiB → small pool
const PAGE = 2 << 20; // bytes, expandable segment granularity

/** One allocation in issue order: [alloc, free] positions (free after the node at `free` ran). */
export interface Allocation {
  readonly alloc: number;
  readonly free: number;
  readonly bytes: number;
  /** The stream whose pool serves it ('compute' unless a backend allocates on a side stream). */
  readonly stream: string;
}

export interface AllocatorPeaks {
  /** max over the step of Σ live rounded blocks (torch.cuda.max_memory_allocated), bytes. */
  readonly peakAllocatedBytes: number;
  /** max over the step of Σ mapped segment bytes (torch.cuda.max_memory_reserved), bytes. */
  readonly peakReservedBytes: number;
}

export function roundSize(bytes: number): number {
  return bytes < MIN_BLOCK ? MIN_BLOCK : Math.ceil(bytes / MIN_BLOCK) * MIN_BLOCK;
}

interface Block {
  start: number;
  size: number;
  free: boolean;
}
const BY_START = bisector((b: Block) => b.start);

/** One expandable segment: blocks in address order and its mapped extent. */
class Segment {
  readonly blocks: Block[] = [];
  mapped = 0;

  alloc(size: number): Block {
    let best = -1;
    for (let i = 0; i < this.blocks.length; i++) {
      const b = this.blocks[i];
      if (b.free && b.size >= size && (best < 0 || b.size < this.blocks[best].size)) best = i;
    }
    if (best < 0) best = this.grow(size);
    const b = this.blocks[best];
    if (b.size > size) this.blocks.splice(best + 1, 0, { start: b.start + size, size: b.size - size, free: true });
    b.size = size;
    b.free = false;
    return b;
  }

  /** Position of a block in the address-ordered list. */
  private indexOf(block: Block): number {
    return BY_START.left(this.blocks, block.start);
  }

  /** Extends the free tail (or appends a block) so that `size` fits at the end; returns its index. */
  private grow(size: number): number {
    const last = this.blocks[this.blocks.length - 1];
    const end = last === undefined ? 0 : last.start + last.size;
    if (last?.free) last.size = size;
    else this.blocks.push({ start: end, size, free: true });
    const tail = this.blocks[this.blocks.length - 1];
    this.mapped = Math.max(this.mapped, Math.ceil((tail.start + tail.size) / PAGE) * PAGE);
    return this.blocks.length - 1;
  }

  release(block: Block): void {
    const i = this.indexOf(block);
    block.free = true;
    const next = this.blocks[i + 1];
    if (next?.free) {
      block.size += next.size;
      this.blocks.splice(i + 1, 1);
    }
    const prev = this.blocks[i - 1];
    if (prev?.free) {
      prev.size += block.size;
      this.blocks.splice(i, 1);
    }
  }
}

/**
 * Replays allocations in issue order through the caching allocator; `baseBytes` is already allocated (persistent
 * state).
 */
export function cachingAllocatorPeaks(allocs: readonly Allocation[], baseBytes = 0): AllocatorPeaks {
  const segments = new Map<string, Segment>();
  const segmentOf = (bytes: number, stream: string) => {
    const key = `${bytes <= SMALL_SIZE ? 'small' : 'large'}|${stream}`;
    let s = segments.get(key);
    if (s === undefined) segments.set(key, (s = new Segment()));
    return s;
  };
  // persistent state is allocated at init, once, in one run of the large pool (no holes)
  const baseBlock = baseBytes > 0 ? roundSize(baseBytes) : 0;
  const base = Math.ceil(baseBlock / PAGE) * PAGE;
  // events: at each position allocations first, then frees (a node's outputs exist while it runs)
  const order = allocs.map((_, k) => k);
  const byAlloc = [...order].sort((a, b) => allocs[a].alloc - allocs[b].alloc || a - b);
  const byFree = [...order].sort((a, b) => allocs[a].free - allocs[b].free || a - b);
  const blocks = new Array<Block | undefined>(allocs.length);
  let allocated = baseBlock;
  let peakAllocated = allocated;
  let peakReserved = base;
  let ia = 0;
  let f = 0;
  while (ia < byAlloc.length || f < byFree.length) {
    const nextAlloc = ia < byAlloc.length ? allocs[byAlloc[ia]].alloc : Infinity;
    const nextFree = f < byFree.length ? allocs[byFree[f]].free : Infinity;
    if (nextAlloc <= nextFree) {
      const k = byAlloc[ia++];
      const size = roundSize(allocs[k].bytes);
      blocks[k] = segmentOf(size, allocs[k].stream).alloc(size);
      allocated += size;
      peakAllocated = Math.max(peakAllocated, allocated);
      let mapped = base;
      for (const s of segments.values()) mapped += s.mapped;
      peakReserved = Math.max(peakReserved, mapped);
    } else {
      const k = byFree[f++];
      const b = blocks[k];
      if (b === undefined) continue;
      allocated -= b.size;
      segmentOf(b.size, allocs[k].stream).release(b);
    }
  }
  return { peakAllocatedBytes: peakAllocated, peakReservedBytes: peakReserved };
}

/**
 * The allocations of one rank running `graph` (a backend's schedule graph, nodes in execution
 * order): every non-persistent tensor from its producer to its last reader (liveIntervals), a
 * bucket's gathered outputs as one flat buffer (the bucketed collective writes one tensor), and
 * the op-internal tensors our coarse ops hide (hidden_tensors.ts). `streamOf` names the stream
 * whose pool serves a collective's buffers (default: the compute stream).
 */
export function scheduleAllocations(
  graph: StepGraph,
  streamOf: (node: GraphNode, role: 'input' | 'output') => string = () => 'compute',
): Allocation[] {
  const nodes = graph.nodes;
  const intervals = liveIntervals(graph, nodes);
  const stream = new Map<string, string>();
  const flat = new Map<string, string>(); // base → the first base of its bucket's output buffer
  for (const n of nodes) {
    if (n.collective === undefined) continue;
    for (const id of n.inputs) stream.set(baseOf(graph.tensors, id), streamOf(n, 'input'));
    const outs = n.outputs.map((id) => baseOf(graph.tensors, id));
    for (const b of outs) {
      stream.set(b, streamOf(n, 'output'));
      if (n.collective.members !== undefined && outs.length > 1) flat.set(b, outs[0]);
    }
  }
  const merged = new Map<string, Allocation>();
  for (const [base, iv] of intervals) {
    if (graph.tensors[base]?.host === true) continue; // pinned host memory: not the CUDA caching allocator's
    const key = flat.get(base) ?? base;
    const cur = merged.get(key);
    const s = stream.get(base) ?? 'compute';
    const widened =
      cur === undefined
        ? iv
        : { alloc: Math.min(cur.alloc, iv.alloc), free: Math.max(cur.free, iv.free), bytes: cur.bytes + iv.bytes };
    merged.set(key, { ...widened, stream: s });
  }
  return [...merged.values(), ...hiddenTensors(nodes)];
}

/** Peak allocated and reserved bytes of one rank running a schedule graph. */
export function allocatorPeaks(
  graph: StepGraph,
  streamOf?: (node: GraphNode, role: 'input' | 'output') => string,
): AllocatorPeaks {
  return cachingAllocatorPeaks(scheduleAllocations(graph, streamOf), persistentBytes(graph));
}
