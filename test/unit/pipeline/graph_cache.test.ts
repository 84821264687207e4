// compareBackends reuses the last graph while the step config is unchanged; buildGraph follows
// the config's activation checkpointing (null = the preset's torchtitan train config).
import { describe, expect, it } from 'vitest';
import { validateConfig, type SimConfig } from '../../../src/config';
import { buildGraph, compareBackends } from '../../../src/pipeline';

function cfg(partial: Record<string, unknown>): SimConfig {
  const r = validateConfig(partial);
  if (!r.ok) throw r.error;
  return r.value;
}

describe('compareBackends', () => {
  it('reuses the graph across edits that do not change it, and rebuilds when one does', () => {
    const first = compareBackends(cfg({ ranks: 4 }));
    const net = compareBackends(cfg({ ranks: 4, network: 'pcie-ethernet', jitterPct: 3 }));
    expect(net.a.graph).toBe(first.a.graph);
    expect(net.b.graph).toBe(first.a.graph);
    const more = compareBackends(cfg({ ranks: 8 }));
    expect(more.a.graph).not.toBe(first.a.graph);
    expect(more.a.graph.meta.worldSize).toBe(8);
    // the reused graph gives what a fresh build gives
    expect(compareBackends(cfg({ ranks: 4 })).a.sim).toEqual(first.a.sim);
  });
});

describe('buildGraph', () => {
  it('builds the activation checkpointing the config asks for', () => {
    const none = buildGraph(cfg({ model: 'small', ranks: 2, activationCheckpointing: 'none' }));
    const full = buildGraph(cfg({ model: 'small', ranks: 2, activationCheckpointing: 'full' }));
    expect(full.nodes.length).toBeGreaterThan(none.nodes.length); // recompute in backward
  });
});
