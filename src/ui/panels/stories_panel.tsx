// Story presets in the header (a menu) and the current story's caption above the timelines,
// written from the claims' checks on the sides shown.

import { useMemo, useState } from 'react';
import type { SimConfig } from '../../config';
import { appStore, type SideResult } from '../../store';
import { useApp } from '../use_app';
import { forHand, useInputKind } from '../input_kind';
import { unlikeness } from '../like_runs';
import { applyStory } from '../story_apply';
import { STORIES, type Story, storyById, storyCaption } from '../stories';

export function StoryMenu() {
  const story = useApp((s) => s.story);
  return (
    <label className="story-menu">
      <span className="sr-only">Story</span>
      <select
        value={storyById(story) ? story! : ''}
        data-testid="story-menu"
        aria-label="story preset"
        onChange={(e) => {
          const s = storyById(e.target.value);
          if (s) void applyStory(appStore, s);
        }}
      >
        <option value="">Stories…</option>
        {STORIES.map((s) => (
          <option key={s.id} value={s.id}>
            {s.title}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The caption's text for the sides on screen: claims only over like simulated runs of one config. */
function captionText(story: Story, a: SideResult | null, b: SideResult | null, cfg: SimConfig): string {
  if (!a || !b) return `${story.setup(cfg)} Simulating…`;
  const unlike = unlikeness(a, b);
  if (unlike && unlike.kind !== 'hang') return `${story.setup(cfg)} ${unlike.text}`;
  return storyCaption(story, { a, b, cfg });
}

export function StoryCaption() {
  const story = storyById(useApp((s) => s.story));
  const a = useApp((s) => s.sides.a);
  const b = useApp((s) => s.sides.b);
  const cfg = useApp((s) => s.config);
  const input = useInputKind();
  const text = useMemo(() => (story ? forHand(captionText(story, a, b, cfg), input) : ''), [story, a, b, cfg, input]);
  const [expanded, setExpanded] = useState(false);
  if (!story) return null;
  // on a narrow screen the caption keeps to three lines until "more", so the timelines stay in view
  const cls = `story-caption banner info${expanded ? ' expanded' : ''}`;
  return (
    <div className={cls} data-testid="story-caption" data-story={story.id} role="note">
      <b>{story.title}.</b> <span className="story-text">{text}</span>
      <button type="button" className="link story-more" onClick={() => setExpanded(!expanded)} data-testid="story-more">
        {expanded ? 'less' : 'more'}
      </button>
      <button
        type="button"
        className="link story-close"
        onClick={() => appStore.getState().setStory(null)}
        aria-label="close the story caption"
        data-testid="story-close"
      >
        ×
      </button>
    </div>
  );
}
