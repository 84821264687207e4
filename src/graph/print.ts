// Text forms of the IR, one line per node like FX's `graph.print_tabular` / `print(gm.graph)`:
//   %12 layers.0.attention.wq.all_gather = all_gather[dp×8 bf16 8.00 MiB](layers.0.attention.wq.cast)

import { formatBytes } from '../util';
import { collectiveCostBytes, type GraphNode, type StepGraph } from './types';

function nodeToString(n: GraphNode): string {
  let what: string;
  if (n.collective) {
    const c = n.collective;
    const bytes = collectiveCostBytes(c);
    const op = c.reduceOp ? ` ${c.reduceOp}` : '';
    what = `${n.kind}[${c.group}×${c.groupSize} ${c.dtype}${op} ${formatBytes(bytes)}]`;
  } else if (n.kind === 'wait') {
    what = `wait[${n.waitOf}]`;
  } else {
    what = n.kind === 'compute' ? String(n.op) : `${n.kind}:${n.op}`;
  }
  const outs = n.outputs.join(', ');
  const extra: string[] = [n.phase];
  if (n.layer !== undefined) extra.push(`layer ${n.layer}`);
  if (n.flops > 0 && n.matmulLike) extra.push(`${(n.flops / 1e9).toPrecision(3)} GFLOP`);
  if (n.estMs !== undefined) extra.push(`est ${n.estMs.toPrecision(3)} ms`);
  return (
    `%${n.id} ${n.name} = ${what}(${n.inputs.join(', ')})${outs && outs !== n.name ? ` -> ${outs}` : ''}  # ` +
    `${extra.join(', ')}`
  );
}

/** The whole graph, one line per node, after a header with its meta. */
export function graphToString(g: StepGraph): string {
  const m = g.meta;
  const head =
    `# step graph ${m.model}: world ${m.worldSize}, batch ${m.batch}×${m.seqLen}, param ${m.paramDtype}, ` +
    `reduce ${m.reduceDtype}, ${g.nodes.length} nodes`;
  return [head, ...g.nodes.map(nodeToString)].join('\n');
}

/** Counts of nodes by kind (for summaries and tests). */
export function countKinds(g: StepGraph): Record<string, number> {
  const c: Record<string, number> = {};
  for (const n of g.nodes) c[n.kind] = (c[n.kind] ?? 0) + 1;
  return c;
}
