// verifyGraph stops at the first bad node with its index, kind and inputs.
import { describe, expect, it } from 'vitest';
import { FsdpSimError } from '../../../src/errors';
import { GraphError, buildStepGraph, type GraphNode, type StepGraph } from '../../../src/graph';
import { verifyGraph } from '../../../src/graph/verify';

const base = () => buildStepGraph({ model: 'tiny', worldSize: 2 });
const withNodes = (g: StepGraph, nodes: GraphNode[]): StepGraph => ({
  ...g,
  nodes: nodes.map((n, i) => ({ ...n, id: i })),
});
const idx = (g: StepGraph, name: string) => g.nodes.findIndex((n) => n.name === name);

function expectGraphError(g: StepGraph, index: number | undefined, text: RegExp): GraphError {
  try {
    verifyGraph(g);
  } catch (e) {
    expect(e).toBeInstanceOf(GraphError);
    expect(e).toBeInstanceOf(FsdpSimError);
    const ge = e as GraphError;
    expect(ge.code).toBe('graph');
    expect(ge.message).toMatch(text);
    if (index !== undefined) expect(ge.index).toBe(index);
    return ge;
  }
  throw new Error('verifyGraph did not throw');
}

describe('verifyGraph', () => {
  it('accepts the builder output and returns it', () => {
    const g = base();
    expect(verifyGraph(g)).toBe(g);
  });

  it('reports a read of an unknown tensor with the node kind and inputs', () => {
    const g = base();
    const i = idx(g, 'layers.0.attention.wq');
    const nodes = [...g.nodes];
    nodes[i] = { ...nodes[i], inputs: ['nope', ...nodes[i].inputs.slice(1)] };
    const e = expectGraphError(withNodes(g, nodes), i, /unknown tensor 'nope'/);
    expect(e.kind).toBe('compute');
    expect(e.inputs).toContain('nope');
    expect(e.message).toContain(`node ${i} 'layers.0.attention.wq'`);
  });

  it('reports a read before the write', () => {
    const g = base();
    const use = idx(g, 'layers.0.attention.wq');
    const nodes = [...g.nodes];
    const [moved] = nodes.splice(use, 1);
    nodes.splice(idx(g, 'layers.0.attention_norm'), 0, moved); // before its input's producer
    expectGraphError(withNodes(g, nodes), idx(g, 'layers.0.attention_norm'), /before it is written/);
  });

  it('reports a tensor written twice', () => {
    const g = base();
    const i = idx(g, 'layers.0.attention.wk');
    const nodes = [...g.nodes];
    nodes[i] = { ...nodes[i], outputs: ['layers.0.attention.wq'] };
    expectGraphError(withNodes(g, nodes), i, /a second time/);
  });

  it('reports ids that are not positions', () => {
    const g = base();
    const nodes = [...g.nodes];
    nodes[5] = { ...nodes[5], id: 6 };
    expectGraphError({ ...g, nodes }, 5, /id 6 ≠ position 5/);
  });

  it('reports a wait without a preceding collective', () => {
    const g = base();
    const ag = idx(g, 'layers.0.attention.wq.weight.all_gather');
    const nodes = [...g.nodes];
    [nodes[ag], nodes[ag + 1]] = [nodes[ag + 1], nodes[ag]];
    expectGraphError(withNodes(g, nodes), ag, /wait|before it is written/);
    const renamed = [...g.nodes];
    renamed[ag + 1] = { ...renamed[ag + 1], waitOf: 'layers.0.attention.wq.cast' };
    expectGraphError(withNodes(g, renamed), ag + 1, /without a preceding collective/);
  });

  it('reports a collective without a wait', () => {
    const g = base();
    const w = idx(g, 'norm.weight.reduce_scatter.wait');
    const nodes = g.nodes.filter((_, i) => i !== w);
    // the optimizer reads the wait's output: drop the reader too, so only the missing wait remains
    const kept = nodes.filter((n) => !n.inputs.includes(g.nodes[w].outputs[0]));
    expectGraphError(withNodes(g, kept), w - 1, /without a wait/);
  });

  it('reports a collective missing its collective info', () => {
    const g = base();
    const i = idx(g, 'output.weight.all_gather');
    const nodes = [...g.nodes];
    const { collective: _drop, ...rest } = nodes[i];
    nodes[i] = rest as GraphNode;
    expectGraphError(withNodes(g, nodes), i, /without collective info/);
  });

  it('reports a second wait on one collective', () => {
    const g = base();
    const w = idx(g, 'norm.weight.wait');
    const nodes = [...g.nodes];
    nodes.splice(w + 1, 0, { ...nodes[w], name: 'extra.wait', outputs: [] });
    expectGraphError(withNodes(g, nodes), w + 1, /second wait/);
  });

  it('reports a tensor whose bytes disagree with its shape and dtype', () => {
    const g = base();
    const tensors = { ...g.tensors, loss: { ...g.tensors.loss, bytes: 8 } };
    expectGraphError({ ...g, tensors }, undefined, /tensor 'loss' has bytes 8, numel·4 = 4/);
  });

  it('reports a duplicated node name', () => {
    const g = base();
    const nodes = [...g.nodes];
    nodes[3] = { ...nodes[3], name: nodes[2].name };
    expectGraphError(withNodes(g, nodes), 3, /name used twice/);
  });
});

describe("indexGraph (the backends' view of a graph)", () => {
  it('throws a GraphError, not a ConfigError, naming the node, kind and inputs of a repeated name', async () => {
    const { indexGraph } = await import('../../../src/backends');
    const { ConfigError } = await import('../../../src/errors');
    const g = base();
    const nodes = [...g.nodes];
    nodes[3] = { ...nodes[3], name: nodes[1].name };
    const bad = withNodes(g, nodes);
    let caught: unknown;
    try {
      indexGraph(bad);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(GraphError);
    expect(caught).not.toBeInstanceOf(ConfigError);
    const ge = caught as GraphError;
    expect([ge.code, ge.index, ge.nodeName, ge.kind]).toEqual(['graph', 3, nodes[1].name, nodes[3].kind]);
    expect(ge.message).toMatch(/^graph node 3 .* repeats the name of node 1$/);
  });
});
