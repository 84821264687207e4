// torch's MemoryTracker over the FX-shaped view: live bytes by storage as nodes are scheduled in
// any order. A view shares its base's storage; a node allocates the storages of its outputs that
// no earlier node made; a storage is freed by the node that schedules its last use, unless a
// `primals` placeholder (a persistent tensor) made it; storages the output node reads are never
// freed. `wait_tensor` makes a fresh storage (its fake kernel is `empty_like`).
// Upstream: torch/_inductor/fx_passes/memory_estimator.py (GraphAliasTracker, MemoryTracker).

import { hbmBytes } from '../../graph';
import { weakMemo } from '../../util';
import { NodeClass, type TorchGraph } from './torch_graph';

export interface StorageTables {
  readonly bytes: Float64Array; // per storage
  readonly releasable: Uint8Array;
  /** CSR per torch node: storages it allocates fresh. */
  readonly allocOff: Int32Array;
  readonly allocIdx: Int32Array;
  /** CSR per torch node: distinct storages of its inputs (its "uses"). */
  readonly useOff: Int32Array;
  readonly useIdx: Int32Array;
  readonly useCount: Int32Array; // per storage: nodes that use it
}

// keyed by the region's edge table, which every view of one region shares (runtimes aside, a
// region's views are the same graph)
const CACHE = weakMemo((tg: TorchGraph) => tg.parOff, buildStorageTables);

function storageTables(tg: TorchGraph): StorageTables {
  return CACHE(tg);
}

function buildStorageTables(tg: TorchGraph): StorageTables {
  const { ix, n } = tg;
  const tensors = ix.graph.tensors;
  const storageOf = new Map<string, number>(); // root tensor id → storage
  const bytes: number[] = [];
  const releasable: number[] = [];
  const storage = (id: string): number => {
    let root = id;
    for (let hops = 0; hops < 64 && tensors[root]?.aliasOf !== undefined && !isWaitOutput(root); hops++)
      root = tensors[root].aliasOf!;
    let s = storageOf.get(root);
    if (s === undefined) {
      storageOf.set(root, (s = bytes.length));
      bytes.push(hbmBytes(tensors[root]));
      // torch asks the storage's allocator in this graph: a backward input viewing a primal is freed
      releasable.push(tensors[id]?.persistent ? 0 : 1);
    }
    return s;
  };
  // a wait's output: its writer (one per tensor in the index) is a wait
  function isWaitOutput(id: string): boolean {
    const p = ix.producerOf.get(id);
    return p !== undefined && ix.collOfWait[p] >= 0;
  }
  // CSR per torch node: the distinct storages of its outputs, first seen first
  const outOff = new Int32Array(n + 1);
  const outIdx: number[] = [];
  const addOutput = (t: number, s: number) => {
    for (let k = outOff[t]; k < outIdx.length; k++) if (outIdx[k] === s) return;
    outIdx.push(s);
  };
  for (let t = 0; t < n; t++) {
    outOff[t] = outIdx.length;
    const ph = tg.placeholderTensor.get(t);
    if (ph !== undefined) outIdx.push(storage(ph));
    else if (tg.cls[t] !== NodeClass.Output) for (const o of ix.nodes[tg.irOf[t]].outputs) addOutput(t, storage(o));
  }
  outOff[n] = outIdx.length;
  const allocated = new Uint8Array(bytes.length);
  const allocOff = new Int32Array(n + 1);
  const useOff = new Int32Array(n + 1);
  const allocIdx: number[] = [];
  const useIdx: number[] = [];
  const useCount = new Int32Array(bytes.length);
  const seen = new Int32Array(bytes.length).fill(-1);
  for (let t = 0; t < n; t++) {
    for (let j = outOff[t]; j < outOff[t + 1]; j++) {
      const s = outIdx[j];
      if (!allocated[s]) {
        allocated[s] = 1;
        allocIdx.push(s);
      }
    }
    for (let k = tg.parOff[t]; k < tg.parOff[t + 1]; k++) {
      const p = tg.parIdx[k];
      for (let j = outOff[p]; j < outOff[p + 1]; j++) {
        const s = outIdx[j];
        if (seen[s] === t) continue;
        seen[s] = t;
        useIdx.push(s);
        useCount[s]++;
      }
    }
    allocOff[t + 1] = allocIdx.length;
    useOff[t + 1] = useIdx.length;
  }
  return {
    bytes: Float64Array.from(bytes),
    releasable: Uint8Array.from(releasable),
    allocOff,
    allocIdx: Int32Array.from(allocIdx),
    useOff,
    useIdx: Int32Array.from(useIdx),
    useCount,
  };
}

/** torch MemoryTracker: placeholders' storages are live from the start. */
export class TorchMemoryTracker {
  private readonly live: Uint8Array;
  private readonly remaining: Int32Array;
  /** Live bytes after the last scheduled node's frees (torch current_memory_bytes). */
  current = 0;
  /** Highest live bytes, counted after a node's allocations and before its frees (torch peak_memory). */
  peak = 0;

  constructor(
    private readonly tg: TorchGraph,
    private readonly st: StorageTables = storageTables(tg),
  ) {
    this.live = new Uint8Array(st.bytes.length);
    this.remaining = st.useCount.slice();
    for (let t = 0; t < tg.n; t++) if (tg.cls[t] === NodeClass.Placeholder) this.allocate(t);
    this.peak = this.current;
  }

  schedule(t: number): void {
    const st = this.st;
    const cls = this.tg.cls[t];
    // every use counts as scheduled, but placeholders and the output allocate and free nothing
    const acts = cls !== NodeClass.Placeholder && cls !== NodeClass.Output;
    if (acts) {
      this.allocate(t);
      if (this.current > this.peak) this.peak = this.current;
    }
    for (let k = st.useOff[t]; k < st.useOff[t + 1]; k++) {
      const s = st.useIdx[k];
      if (--this.remaining[s] === 0 && acts && st.releasable[s] && this.live[s]) {
        this.live[s] = 0;
        this.current -= st.bytes[s];
      }
    }
  }

  private allocate(t: number): void {
    const st = this.st;
    for (let k = st.allocOff[t]; k < st.allocOff[t + 1]; k++) {
      const s = st.allocIdx[k];
      if (!this.live[s]) {
        this.live[s] = 1;
        this.current += st.bytes[s];
      }
    }
  }
}

export interface TorchBaseline {
  /** torch original_peak_memory: the highest post-node live bytes of the program order. */
  readonly peakBytes: number;
  /** torch original_mem_before_compute_index: highest live bytes since the previous compute node. */
  readonly beforeCompute: Float64Array;
}

const BASELINES = weakMemo((tg: TorchGraph) => tg.parOff, computeBaseline);

/** torch _compute_baseline_memory over the program order (per region: it needs no runtimes). */
export function torchBaseline(tg: TorchGraph): TorchBaseline {
  return BASELINES(tg);
}

function computeBaseline(tg: TorchGraph): TorchBaseline {
  const tracker = new TorchMemoryTracker(tg);
  const before: number[] = [];
  let sinceLast = 0;
  let peak = 0;
  for (let t = 0; t < tg.n; t++) {
    tracker.schedule(t);
    const cur = tracker.current;
    if (cur > sinceLast) sinceLast = cur;
    if (tg.cls[t] === NodeClass.Compute) {
      before.push(sinceLast);
      sinceLast = cur;
    }
    if (cur > peak) peak = cur;
  }
  return { peakBytes: peak, beforeCompute: Float64Array.from(before) };
}
