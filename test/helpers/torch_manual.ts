// The fixtures of torch's manual overlap scheduler (test/fixtures/torch_manual, made by
// tools/torch_manual/gen_manual.py): a graph torch traced, as the ManualGraph the port reads, and
// what torch decided on it. torch's own predicates are applied to the dump here (its
// is_fsdp_all_gather: one placeholder ancestor; is_fsdp_reduce_scatter: only one-input readers
// down to the output; a folded cast: an all-gather's single-reader dtype cast).
import type { CollectiveKind } from '../../src/graph';
import type { ManualGraph, ManualResult } from '../../src/backends/manual';
import type { PlanEntry } from '../../src/backends/manual/manual_graph';
import { gzJsonReader } from './torch_fixtures';
import { fixtureUrl } from './fixtures';

interface DumpNode {
  readonly name: string;
  readonly op: string;
  readonly target: string;
  readonly args: readonly string[];
  readonly dtype?: string;
  readonly module?: string;
  readonly compute?: boolean;
  readonly backward?: boolean;
  readonly group?: string;
}

export interface ManualExpected {
  readonly plan: PlanEntry[];
  readonly stateFqns: string[];
  readonly paramModuleOrder?: Record<string, number>;
  readonly mode: 'jit' | 'joint';
  readonly torch: string;
  readonly buckets: string[][];
  readonly order: string[];
  readonly collectivesBefore: number;
  readonly collectivesAfter: number;
}

export interface ManualFixture {
  readonly graph: ManualGraph;
  readonly expected: ManualExpected;
}

export const readManualFixture = (() => {
  const read = gzJsonReader(fixtureUrl('torch_manual/'));
  return (file: string): ManualFixture => {
    const { dump, expected } = read(file) as { dump: { nodes: DumpNode[] }; expected: ManualExpected };
    return { graph: manualGraphOfDump(dump.nodes), expected };
  };
})();

const KINDS: readonly [string, CollectiveKind][] = [
  ['all_gather_into_tensor', 'all_gather'],
  ['reduce_scatter_tensor', 'reduce_scatter'],
  ['all_reduce', 'all_reduce'],
];
const kindOf = (n: DumpNode): CollectiveKind | undefined =>
  n.target.startsWith('_c10d_functional.') ? KINDS.find(([t]) => n.target.includes(t))?.[1] : undefined;
const CASTS = new Set(['aten._to_copy.default', 'prims.convert_element_type.default']);
const isCast = (n: DumpNode) => CASTS.has(n.target);

function manualGraphOfDump(nodes: readonly DumpNode[]): ManualGraph {
  const n = nodes.length;
  const idx = new Map(nodes.map((d, i) => [d.name, i]));
  const inputs = nodes.map((d) => d.args.map((a) => idx.get(a)!));
  const users: number[][] = nodes.map(() => []);
  inputs.forEach((ins, i) => ins.forEach((p) => users[p].push(i)));
  const waitOf = new Int32Array(n).fill(-1);
  nodes.forEach((d, i) => {
    if (d.target === '_c10d_functional.wait_tensor.default' && kindOf(nodes[inputs[i][0]])) waitOf[inputs[i][0]] = i;
  });
  const kind = nodes.map((d, i) => (waitOf[i] >= 0 ? kindOf(d) : undefined));
  const flag = (f: (d: DumpNode, i: number) => boolean) => Uint8Array.from(nodes, (d, i) => Number(f(d, i)));
  return {
    n,
    names: nodes.map((d) => d.name),
    inputs,
    waitOf,
    kind,
    bucketKey: nodes.map((d, i) => (kind[i] ? `${kind[i]}|${d.group ?? ''}|${d.dtype}` : undefined)),
    candidate: flag((_, i) => isCandidate(nodes, inputs, users, kind[i], i)),
    placeholder: flag((d) => d.op === 'placeholder'),
    output: flag((d) => d.op === 'output'),
    compute: flag((d) => d.compute === true),
    foldedCast: Int32Array.from(nodes, (_, i) => {
      const src = inputs[i][0];
      return kind[i] === 'all_gather' && isCast(nodes[src]) && users[src].length === 1 ? src : -1;
    }),
    module: nodes.map((d) => d.module ?? ''),
    backward: flag((d) => d.backward === true),
  };
}

function isCandidate(
  nodes: readonly DumpNode[],
  inputs: number[][],
  users: number[][],
  kind: CollectiveKind | undefined,
  i: number,
): boolean {
  if (kind === 'all_reduce') return true;
  if (kind === 'all_gather') return placeholderAncestors(nodes, inputs, i) === 1;
  if (kind !== 'reduce_scatter') return false;
  const stack = [i];
  const seen = new Set<number>();
  while (stack.length > 0) {
    const cur = stack.pop()!;
    if (seen.has(cur)) continue;
    seen.add(cur);
    for (const u of users[cur]) {
      if (nodes[u].op === 'output') continue;
      if (inputs[u].length !== 1) return false;
      stack.push(u);
    }
  }
  return true;
}

function placeholderAncestors(nodes: readonly DumpNode[], inputs: number[][], i: number): number {
  const seen = new Set<number>();
  const stack = [...inputs[i]];
  let count = 0;
  while (stack.length > 0) {
    const cur = stack.pop()!;
    if (seen.has(cur)) continue;
    seen.add(cur);
    if (nodes[cur].op === 'placeholder') count++;
    stack.push(...inputs[cur]);
  }
  return count;
}

/** The port's order in the fixture's tokens: node names, and start:/wait:<first member> per bucket. */
export function orderTokens(g: ManualGraph, r: ManualResult): string[] {
  const starts = new Map(r.buckets.map((b) => [b.start, b.members[0]]));
  const waits = new Map(r.buckets.map((b) => [b.wait, b.members[0]]));
  return r.order.map((id) => {
    if (id < g.n) return g.names[id];
    const s = starts.get(id);
    return s !== undefined ? `start:${g.names[s]}` : `wait:${g.names[waits.get(id)!]}`;
  });
}
