// The UI's face to the page entry (src/main.tsx): the app and its stylesheet, the stories a link
// can open, and what each timeline drew last (the tests' probe). Everything else in ui/ is private.

import './styles.css';

export { App } from './app';
export { storyById } from './stories';
export { applyStory } from './story_apply';
export { type TimelineProbe, timelineProbes } from './timeline/probe';
