// Story presets in the header (a menu) and the current story's caption above the timelines.

import { appStore, useApp } from '../../store';
import { applyStory } from '../story_apply';
import { STORIES, storyById } from '../stories';

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
        {STORIES.map((s) => <option key={s.id} value={s.id}>{s.title}</option>)}
      </select>
    </label>
  );
}

export function StoryCaption() {
  const story = storyById(useApp((s) => s.story));
  if (!story) return null;
  return (
    <div className="story-caption banner info" data-testid="story-caption" data-story={story.id} role="note">
      <b>{story.title}.</b> <span>{story.caption}</span>
      <button type="button" className="link" onClick={() => appStore.getState().setStory(null)} aria-label="close the story caption" data-testid="story-close">×</button>
    </div>
  );
}
