// IR verifier (tinygrad's habit): walks the graph in order and throws a GraphError at the
// first bad node, naming its index, kind and inputs. Run after every pass in tests and dev.

import { numel } from './flops';
import { GraphError } from './graph_errors';
import { COLLECTIVE_KINDS as KINDS_OF_COLLECTIVES, DTYPE_BYTES, type GraphNode, type StepGraph } from './types';

const COLLECTIVE_KINDS: ReadonlySet<string> = new Set(KINDS_OF_COLLECTIVES);
const KINDS = new Set(['compute', 'cast', 'view', ...KINDS_OF_COLLECTIVES, 'wait']);

function fail(n: GraphNode, i: number, why: string): never {
  const ins = Array.isArray(n?.inputs) ? n.inputs : [];
  throw new GraphError(
    `node ${i} '${n?.name}' (${n?.kind}, inputs [${ins.join(', ')}]): ${why}`,
    i,
    n?.name,
    n?.kind,
    ins,
  );
}

/** Checks tensors (shape, bytes = numel·dtype, aliases) and then every node; returns the graph. */
export function verifyGraph(g: StepGraph): StepGraph {
  for (const [id, t] of Object.entries(g.tensors)) {
    if (t.id !== id) throw new GraphError(`tensor '${id}' has id '${t.id}'`);
    if (!Array.isArray(t.shape) || t.shape.some((d) => !Number.isSafeInteger(d) || d < 0)) {
      throw new GraphError(`tensor '${id}' has a bad shape ${JSON.stringify(t.shape)}`);
    }
    const bpe = DTYPE_BYTES[t.dtype];
    if (bpe === undefined) throw new GraphError(`tensor '${id}' has unknown dtype '${t.dtype}'`);
    const want = numel(t.shape) * bpe;
    if (t.bytes !== want) throw new GraphError(`tensor '${id}' has bytes ${t.bytes}, numel·${bpe} = ${want}`);
    if (t.aliasOf !== undefined && !g.tensors[t.aliasOf])
      throw new GraphError(`tensor '${id}' aliases unknown tensor '${t.aliasOf}'`);
  }
  const written = new Set<string>();
  const producers = new Map<string, number>();
  g.nodes.forEach((n, i) => n?.outputs?.forEach((o) => producers.has(o) || producers.set(o, i)));
  const names = new Map<string, number>();
  const pendingWait = new Map<string, number>(); // collective name → index, until its wait
  g.nodes.forEach((n, i) => {
    if (n === null || typeof n !== 'object') throw new GraphError(`node ${i} is not an object`, i);
    if (n.id !== i) fail(n, i, `id ${n.id} ≠ position ${i}`);
    if (!KINDS.has(n.kind)) fail(n, i, `unknown kind '${n.kind}'`);
    if (typeof n.name !== 'string' || n.name === '') fail(n, i, 'missing name');
    if (names.has(n.name)) fail(n, i, `name used twice (first at node ${names.get(n.name)})`);
    names.set(n.name, i);
    if (!Array.isArray(n.inputs) || !Array.isArray(n.outputs)) fail(n, i, 'inputs/outputs must be arrays');
    if (!Number.isFinite(n.flops) || n.flops < 0 || !Number.isFinite(n.bytesMoved) || n.bytesMoved < 0) {
      fail(n, i, `bad flops ${n.flops} / bytesMoved ${n.bytesMoved}`);
    }
    for (const t of n.inputs) {
      if (!g.tensors[t]) fail(n, i, `reads unknown tensor '${t}'`);
      const p = producers.get(t);
      if (p !== undefined && !written.has(t)) fail(n, i, `reads '${t}' before it is written (by node ${p})`);
    }
    for (const t of n.outputs) {
      if (!g.tensors[t]) fail(n, i, `writes unknown tensor '${t}'`);
      if (written.has(t)) fail(n, i, `writes '${t}' a second time`);
      written.add(t);
    }
    if (COLLECTIVE_KINDS.has(n.kind)) {
      const c = n.collective;
      if (!c) fail(n, i, 'collective without collective info');
      if (c.kind !== n.kind) fail(n, i, `collective.kind '${c.kind}' ≠ node kind`);
      if (!c.group || !Number.isSafeInteger(c.groupSize) || c.groupSize < 1)
        fail(n, i, `bad group '${c.group}' × ${c.groupSize}`);
      if (!(c.inputBytes >= 0) || !(c.outputBytes >= 0))
        fail(n, i, `bad collective bytes ${c.inputBytes} → ${c.outputBytes}`);
      if (n.inputs.length < 1 || n.outputs.length < 1) fail(n, i, 'collective needs an input and an output tensor');
      pendingWait.set(n.name, i);
    } else if (n.collective) {
      fail(n, i, 'collective info on a non-collective node');
    }
    if (n.kind === 'wait') {
      if (n.waitOf === undefined) fail(n, i, 'wait without waitOf');
      const ci = names.get(n.waitOf);
      if (ci === undefined || !COLLECTIVE_KINDS.has(g.nodes[ci].kind))
        fail(n, i, `wait without a preceding collective '${n.waitOf}'`);
      if (!pendingWait.has(n.waitOf)) fail(n, i, `second wait on collective '${n.waitOf}'`);
      pendingWait.delete(n.waitOf);
      const cOut = g.nodes[ci].outputs;
      if (!n.inputs.some((t) => cOut.includes(t)))
        fail(n, i, `wait does not read its collective's output [${cOut.join(', ')}]`);
    } else if (n.waitOf !== undefined) {
      fail(n, i, 'waitOf on a non-wait node');
    }
  });
  for (const [name, i] of pendingWait) fail(g.nodes[i], i, `collective '${name}' without a wait`);
  return g;
}
