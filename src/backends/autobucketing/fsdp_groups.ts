// Which collectives torch 2.13's FSDP pre-bucketing takes, and into which buckets: FSDP groups
// found through all-gathers only (an all-gather whose input reaches exactly one placeholder),
// reduce-scatters whose wait flows to the outputs through unary ops, the cap from the
// interconnect's saturation size, and the greedy by-size bucketing in graph (wait) order.
// Upstream: torch/_inductor/fx_passes/fsdp.py and bucketing.py (greedy_bucket_collective_by_mb).

import type { GraphNode } from '../../graph';
import { minSaturationBytes, type Nccl213Topology } from '../../estimate';
import { bucketKey } from '../rewrite';
import type { NodeIds } from './fx_list';

/** Tensor → the node of the view that writes it. */
export interface ProducerOf {
  get(tensor: string): GraphNode | undefined;
  /** get(n.inputs[k]), answered without the tensor look-up where it can be. */
  inputOf(n: GraphNode, k: number): GraphNode | undefined;
}

/** An FX graph as a list of IR nodes: a tensor read from outside the list is a placeholder. */
export interface FxView {
  readonly nodes: readonly GraphNode[];
  readonly producer: ProducerOf;
  /** Tensors the output node reads. */
  readonly outputs: ReadonlySet<string>;
  /** Numbers for the nodes (and the nodes a merge adds). */
  readonly ids: NodeIds;
}

/** FX all_input_nodes: the distinct producers (or placeholder tensors) of a node's inputs, in order. */
function inputRefs(v: FxView, node: GraphNode): (GraphNode | string)[] {
  const out: (GraphNode | string)[] = [];
  const ins = node.inputs;
  for (let k = 0; k < ins.length; k++) {
    const ref = v.producer.inputOf(node, k) ?? ins[k];
    if (!out.includes(ref)) out.push(ref);
  }
  return out;
}

/** len(all_input_nodes) without building the list: inputs' distinct producers (or placeholder tensors). */
function inputRefCount(v: FxView, node: GraphNode): number {
  const ins = node.inputs;
  if (ins.length < 2) return ins.length;
  return inputRefs(v, node).length;
}

/** torch is_fsdp_all_gather: the all-gather's inputs reach exactly one placeholder (a parameter). */
function isFsdpAllGather(v: FxView, ag: GraphNode): boolean {
  const seen = new Set<GraphNode | string>();
  const queue = inputRefs(v, ag);
  let placeholders = 0;
  while (queue.length > 0) {
    const r = queue.pop()!;
    if (seen.has(r)) continue;
    seen.add(r);
    if (typeof r === 'string') {
      if (++placeholders > 1) return false;
    } else queue.push(...inputRefs(v, r));
  }
  return placeholders === 1;
}

/** Users of a view's nodes, each once in program order, as the view was when asked. */
export interface UserTable {
  /** undefined: the node is not in the view. */
  of(n: GraphNode): readonly GraphNode[] | undefined;
}

/** Does the view's output node read one of the node's outputs? */
export function readByOutput(v: FxView, n: GraphNode): boolean {
  return n.outputs.some((t) => v.outputs.has(t));
}

/** Users of the nodes of a view, as it was when made: by node number, a node outside it has none. */
class Users implements UserTable {
  constructor(
    private readonly ids: NodeIds,
    private readonly lists: readonly (GraphNode[] | undefined)[],
  ) {}

  of(n: GraphNode): readonly GraphNode[] | undefined {
    const i = this.ids.get(n);
    return i === undefined ? undefined : this.lists[i];
  }
}

/** Users of each node, each once in program order. */
export function usersOf(v: FxView): UserTable {
  const ids = v.ids;
  const lists = new Array<GraphNode[] | undefined>(ids.size).fill(undefined); // filled: fast elements
  for (const n of v.nodes) lists[ids.of(n)] = [];
  // a reader of several of a node's outputs pushes itself once, so a repeat is always the list's last entry
  for (const n of v.nodes) {
    for (let k = 0; k < n.inputs.length; k++) {
      const p = v.producer.inputOf(n, k);
      const i = p === undefined ? undefined : ids.get(p);
      const l = i === undefined ? undefined : lists[i];
      if (l !== undefined && l[l.length - 1] !== n) l.push(n);
    }
  }
  return new Users(ids, lists);
}

/** torch is_fsdp_reduce_scatter_wait: every path from the wait reaches the output through unary nodes. */
export function isFsdpReduceScatterWait(v: FxView, wait: GraphNode, users: UserTable): boolean {
  if (users.of(wait)!.length === 0 && !readByOutput(v, wait)) return false;
  const seen = new Set<GraphNode>();
  const queue = [wait];
  while (queue.length > 0) {
    const n = queue.pop()!;
    if (seen.has(n)) continue;
    seen.add(n);
    for (const u of users.of(n)!) {
      if (inputRefCount(v, u) !== 1) return false;
      queue.push(u);
    }
  }
  return true;
}

/**
 * torch identify_fsdp_groups: the groups of FSDP all-gathers, and the first one's size; `fsdp`:
 * the FSDP all-gathers themselves (is_fsdp_all_gather, asked again by the bucketing before any merge).
 */
export function identifyFsdpGroups(v: FxView): {
  groups: Set<string>;
  groupSize: number | null;
  fsdp: ReadonlySet<GraphNode>;
} {
  const groups = new Set<string>();
  const fsdp = new Set<GraphNode>();
  let groupSize: number | null = null;
  for (const n of v.nodes) {
    if (n.kind !== 'all_gather' || !isFsdpAllGather(v, n)) continue;
    fsdp.add(n);
    groups.add(n.collective!.group);
    groupSize ??= n.collective!.groupSize;
  }
  return { groups, groupSize, fsdp };
}

export interface CapKnobs {
  /** 0: auto (torch's None). */
  readonly pre_bucketing_fsdp_collectives_bucket_cap_mb: number;
  readonly pre_bucketing_fsdp_collectives_min_bucket_cap_mb: number;
  readonly pre_bucketing_fsdp_collectives_max_bucket_cap_mb: number;
  readonly pre_bucketing_fsdp_collectives_saturation_calibration_multiplier: number;
}

/** torch compute_pre_bucket_cap_mb: multiplier × the all-gather saturation size, clipped to [min, max] MB. */
export function preBucketCapMb(groupSize: number, k: CapKnobs, topo: Nccl213Topology): number {
  if (k.pre_bucketing_fsdp_collectives_bucket_cap_mb > 0) return k.pre_bucketing_fsdp_collectives_bucket_cap_mb;
  const saturation = minSaturationBytes(groupSize, 'all_gather', topo);
  const mb = (k.pre_bucketing_fsdp_collectives_saturation_calibration_multiplier * saturation) / (1024 * 1024);
  return Math.max(
    k.pre_bucketing_fsdp_collectives_min_bucket_cap_mb,
    Math.min(k.pre_bucketing_fsdp_collectives_max_bucket_cap_mb, mb),
  );
}

/**
 * torch greedy_bucket_collective_by_mb: the collectives of one kind whose waits pass `keep`, in
 * wait order, grouped into runs of one bucket key (other waits do not break a run), each run cut
 * greedily at `capBytes` (a collective counts max(input, output) bytes); a collective that
 * depends on the open bucket is left out. Buckets of one are dropped.
 */
export function greedyBuckets(
  v: FxView,
  kind: GraphNode['kind'],
  keep: (wait: GraphNode, start: GraphNode) => boolean,
  capBytes: number,
  users: UserTable | null = null, // usersOf(v), where the caller has it
): GraphNode[][] {
  const byName = new Map<string, GraphNode>();
  for (const n of v.nodes) if (n.kind === kind) byName.set(n.name, n);
  const runs: GraphNode[][] = [];
  let run: GraphNode[] = [];
  let runKey: string | null = null;
  for (const w of v.nodes) {
    const start = w.kind === 'wait' && w.waitOf !== undefined ? byName.get(w.waitOf) : undefined;
    if (start === undefined || start.kind !== kind || !keep(w, start)) continue;
    const key = bucketKey(start);
    if (key === runKey) run.push(start);
    else {
      if (run.length > 1) runs.push(run);
      run = [start];
      runKey = key;
    }
  }
  if (run.length > 1) runs.push(run);
  const buckets: GraphNode[][] = [];
  // an all-gather has few ancestors, a reduce-scatter few descendants: walk the small side
  const backward = kind === 'all_gather';
  const children = backward ? null : (users ?? usersOf(v));
  for (const r of runs) {
    // the open bucket, in order (a set: a bucket can hold thousands, and each candidate asks it)
    let open = new Set<GraphNode>();
    let desc = new Set<GraphNode>();
    let size = 0;
    for (const n of r) {
      if (backward ? reaches(v, open, n) : desc.has(n)) continue;
      const c = n.collective!;
      const bytes = Math.max(c.inputBytes, c.outputBytes);
      if (size + bytes > capBytes && open.size > 0) {
        if (open.size > 1) buckets.push([...open]);
        open = new Set();
        size = 0;
        desc = new Set();
      }
      size += bytes;
      open.add(n);
      if (children !== null) addDescendants(n, desc, children);
    }
    if (open.size > 1) buckets.push([...open]);
  }
  return buckets;
}

/** Is `n` a descendant of one of `members`? (A walk up from `n`.) */
function reaches(v: FxView, members: ReadonlySet<GraphNode>, n: GraphNode): boolean {
  if (members.size === 0) return false;
  const seen = new Set<GraphNode>();
  const stack = [n];
  while (stack.length > 0) {
    for (const p of inputRefs(v, stack.pop()!)) {
      if (typeof p === 'string' || seen.has(p)) continue;
      if (members.has(p)) return true;
      seen.add(p);
      stack.push(p);
    }
  }
  return false;
}

function addDescendants(n: GraphNode, desc: Set<GraphNode>, children: UserTable): void {
  const stack = [n];
  while (stack.length > 0) {
    for (const c of children.of(stack.pop()!) ?? []) {
      if (!desc.has(c)) {
        desc.add(c);
        stack.push(c);
      }
    }
  }
}
