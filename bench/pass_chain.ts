// Bench 3b: the autobucketing pass on long graphs. Synthetic FX dumps of L layers (a parameter
// shard → cast → all-gather → wait → matmul chain per layer, the shape of SimpleFSDP's forward),
// imported and passed, at 10k / 40k / 80k layers. Baseline: the import alone (a linear-time
// walk of the same dump), so the ratio says how many imports the pass costs; it must stay flat
// as L grows (near-linear), and 80k layers must pass in under 10 s and 1.5 GB.

import { runAutobucketing } from '../src/backends';
import { makeCostModel } from '../src/estimate';
import { importFxGraph, type StepGraph } from '../src/graph';
import { fmt, type Row } from './stats';

export const CHAIN_LAYERS = [10_000, 40_000, 80_000] as const;

/** An FX dump (format v1) of `layers` SimpleFSDP-like layers on 8 ranks. */
export function fxChain(layers: number): unknown {
  const nodes: Record<string, unknown>[] = [];
  const add = (n: Record<string, unknown>) => nodes.push({ i: nodes.length, ...n });
  add({ name: 'x', op: 'placeholder', target: 'x', args: [], shape: [64, 64], dtype: 'bfloat16' });
  for (let l = 1; l <= layers; l++)
    add({
      name: `primals_${l}`,
      op: 'placeholder',
      target: `primals_${l}`,
      args: [],
      shape: [8, 64],
      dtype: 'float32',
    });
  let prev = 'x';
  for (let l = 0; l < layers; l++) {
    const s = l === 0 ? '' : `_${l}`;
    const fn = (name: string, target: string, args: string[], shape: number[]) =>
      add({ name: `${name}${s}`, op: 'call_function', target, args, shape, dtype: 'bfloat16' });
    fn('_to_copy', 'aten._to_copy.default', [`primals_${l + 1}`], [8, 64]);
    fn('all_gather_into_tensor', '_c10d_functional.all_gather_into_tensor.default', [`_to_copy${s}`], [64, 64]);
    fn('wait_tensor', '_c10d_functional.wait_tensor.default', [`all_gather_into_tensor${s}`], [64, 64]);
    fn('mm', 'aten.mm.default', [prev, `wait_tensor${s}`], [64, 64]);
    prev = `mm${s}`;
  }
  add({ name: 'output', op: 'output', target: 'output', args: [prev] });
  return {
    format: 'fsdp-sim fx dump v1',
    graph: 'forward',
    source: `synthetic chain of ${layers} layers`,
    world_size: 8,
    nodes,
  };
}

const cpuMs = (since: NodeJS.CpuUsage): number => {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
};

export function benchPassChains(): Row[] {
  const cost = makeCostModel({ hardware: 'h100', network: 'nccl-analytical' });
  const rows: Row[] = [];
  for (const layers of CHAIN_LAYERS) {
    const dump = fxChain(layers);
    globalThis.gc?.();
    const rss0 = process.memoryUsage().rss;
    // CPU time, not wall: on a shared machine the wall clock mostly measures the neighbours
    const t0 = process.cpuUsage();
    const imported = importFxGraph(dump);
    if (!imported.ok) throw imported.error;
    const importMs = cpuMs(t0);
    const graph: StepGraph = imported.value;
    const t1 = process.cpuUsage();
    const s = runAutobucketing(graph, cost);
    const passMs = cpuMs(t1);
    const rssMiB = (process.memoryUsage().rss - rss0) / 2 ** 20;
    const big = layers === 80_000;
    rows.push({
      section: 'scale',
      case: `fx chain ${layers / 1000}k layers (${graph.nodes.length} nodes): import + autobucketing`,
      value: `${fmt((importMs + passMs) / 1000, 2)} s CPU (pass ${fmt(passMs / 1000, 2)} s), +${fmt(rssMiB, 0)} MiB rss, ${s.passStats?.[0]?.collectivesBefore ?? 0} collectives`,
      baseline: `import alone ${fmt(importMs / 1000, 2)} s`,
      ratio: `${fmt(passMs / importMs, 1)}× import`,
      target: big ? '< 10 s and < 1.5 GB' : '',
      met: big ? importMs + passMs < 10_000 && rssMiB < 1536 : null,
    });
  }
  return rows;
}
