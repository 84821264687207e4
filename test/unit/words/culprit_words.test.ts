// The sentence `diff` gives when the culprit is not computed (culpritPlan's `skipped`, worded).
import { describe, expect, it } from 'vitest';
import { CULPRIT_EVENT_BUDGET, culpritPlan } from '../../../src/pipeline/culprit';
import { culpritSkipText } from '../../../src/words';

const big = {
  worldSize: 1024,
  rank: 0,
  nodes: CULPRIT_EVENT_BUDGET / 512,
  jitterPct: 5,
  straggler: null,
  oneDim: true,
};

describe('culpritSkipText', () => {
  it('says why, the events it would take and the way out', () => {
    expect(culpritSkipText(culpritPlan(big).skipped!)).toBe(
      'not computed: jitter makes every rank run differently, and comparing all 1024 ranks means 8000000 events, ' +
        `more than the ${CULPRIT_EVENT_BUDGET} diff simulates for it; try fewer ranks or a smaller model`,
    );
    const mesh = culpritPlan({ ...big, jitterPct: 0, straggler: 5, oneDim: false }).skipped!;
    expect(culpritSkipText(mesh)).toMatch(/^not computed: the mesh makes the ranks wait differently, /);
  });
});
