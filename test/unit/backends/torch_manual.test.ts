// The manual scheduler port against torch 2.15's own manual_overlap_bucketing (jit: the forward and
// the backward graph apart) and torchtitan's JointManualOverlapScheduler (joint: one forward +
// backward graph), on graphs torch traced (test/fixtures/torch_manual): the same buckets, packed in
// the same order, and the same final program order, node for node.
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { manualOverlapSchedule, type ManualOptions } from '../../../src/backends/manual';
import { type ManualExpected, orderTokens, readManualFixture } from '../../helpers/torch_manual';
import { fixtureUrl } from '../../helpers/fixtures';

const DIR = fixtureUrl('torch_manual/');
const FILES = readdirSync(DIR).filter((f) => f.endsWith('.json.gz'));

function optionsOf(e: ManualExpected): ManualOptions {
  const order = e.paramModuleOrder ? new Map(Object.entries(e.paramModuleOrder)) : undefined;
  return { mode: e.mode, plan: e.plan, ...(order ? { paramModuleOrder: order } : {}) };
}

describe('torch manual overlap scheduler fixtures', () => {
  it('has fixtures for both modes', () => {
    expect(FILES.some((f) => f.startsWith('jit_'))).toBe(true);
    expect(FILES.some((f) => f.startsWith('joint_'))).toBe(true);
  });

  it.each(FILES)("%s: torch's buckets, in its packing order", (file) => {
    const { graph, expected } = readManualFixture(file);
    const r = manualOverlapSchedule(graph, optionsOf(expected));
    expect(r.buckets.map((b) => b.members.map((m) => graph.names[m]))).toEqual(expected.buckets);
    const starts = graph.kind.filter((k) => k !== undefined).length;
    expect(starts).toBe(expected.collectivesBefore);
    const bucketed = r.buckets.reduce((a, b) => a + b.members.length, 0);
    expect(starts - bucketed + r.buckets.length).toBe(expected.collectivesAfter);
  });

  it('refuses a plan whose entries share nodes, naming the node and the field', () => {
    const { graph, expected } = readManualFixture(FILES.find((f) => f.startsWith('jit_'))!);
    const plan = [...expected.plan, 'layers.0.attention'];
    expect(() => manualOverlapSchedule(graph, { ...optionsOf(expected), plan })).toThrow(
      expect.objectContaining({ field: 'module_bucket_plans', message: expect.stringMatching(/is in two entries/) }),
    );
  });

  it.each(FILES)("%s: torch's final order, node for node", (file) => {
    const { graph, expected } = readManualFixture(file);
    const r = manualOverlapSchedule(graph, optionsOf(expected));
    expect(orderTokens(graph, r)).toEqual(expected.order);
  });
});
