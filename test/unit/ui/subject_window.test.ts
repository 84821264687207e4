// The presentation view's window on a story's subject: the bucket's members on the selected
// event's lane, at a readable share of the width; the next-story cycle.
import { describe, expect, it } from 'vitest';
import type { TraceEvent } from '../../../src/trace/event';
import { STORIES } from '../../../src/ui/stories';
import { nextStory, subjectWindow } from '../../../src/ui/story_apply';

const ag = (rank: number, start: number, dur: number, bucketId?: number): TraceEvent => ({
  rank,
  stream: 'comm:dp',
  kind: 'all_gather',
  name: `ag@${start}`,
  start,
  dur,
  ...(bucketId !== undefined ? { bucketId } : {}),
});

describe('subjectWindow', () => {
  it('frames the whole bucket on the lane at 30 % of the width, centred', () => {
    const events = [ag(0, 1000, 100, 4), ag(0, 1100, 100, 4), ag(1, 0, 5000, 4), ag(0, 3000, 50)];
    const w = subjectWindow(events, 0)!;
    expect(w.endUs - w.startUs).toBeCloseTo(200 / 0.3, 6);
    expect((w.startUs + w.endUs) / 2).toBeCloseTo(1100, 6); // rank 1's member is another lane
  });
  it('frames a lone collective; near the step start the window shifts right, as wide', () => {
    const w = subjectWindow([ag(0, 10, 30)], 0)!;
    expect(w.startUs).toBe(0);
    expect(w.endUs).toBeCloseTo(100, 6);
    expect(subjectWindow([], 0)).toBeNull();
  });
});

describe('nextStory', () => {
  it('cycles through the stories', () => {
    expect(nextStory(null).id).toBe(STORIES[0].id);
    expect(nextStory(STORIES[0].id).id).toBe(STORIES[1].id);
    expect(nextStory(STORIES[STORIES.length - 1].id).id).toBe(STORIES[0].id);
  });
});
