// The sentence `diff` gives when it cannot name the rank the others wait for (pipeline/culprit.ts
// culpritPlan's `skipped`): why, the events it would take, and the way out.

import type { CulpritPlan } from '../pipeline';

export function culpritSkipText(s: NonNullable<CulpritPlan['skipped']>): string {
  const why =
    s.why === 'jitter' ? 'jitter makes every rank run differently' : 'the mesh makes the ranks wait differently';
  return (
    `not computed: ${why}, and comparing all ${s.ranks} ranks means ${s.events} events, ` +
    `more than the ${s.budget} diff simulates for it; try fewer ranks or a smaller model`
  );
}
