// A story run under a torch profile, for the story and MoE screen tests: the story's config with the
// profile's autobucketing knobs, both sides simulated (once per config), its claims and its caption.
import { AUTOBUCKETING_PROFILES } from '../../src/backends/autobucketing/options';
import type { SimConfig } from '../../src/config';
import type { SideResult } from '../../src/store';
import { simulateConfig } from '../../src/store/engine';
import { storyById, storyCaption, storyConfig } from '../../src/ui/stories';

export type TorchProfile = keyof typeof AUTOBUCKETING_PROFILES;
export const PROFILES = Object.keys(AUTOBUCKETING_PROFILES) as TorchProfile[];

const cache = new Map<string, { a: SideResult; b: SideResult }>();

/** Both sides of `cfg`, simulated once per distinct config. */
export function run(cfg: SimConfig): { a: SideResult; b: SideResult } {
  const key = JSON.stringify(cfg);
  if (!cache.has(key)) cache.set(key, simulateConfig(cfg));
  return cache.get(key)!;
}

/** The config with a torch profile's autobucketing knobs (what `--torch-profile` sets). */
export function withProfile(cfg: SimConfig, profile: TorchProfile): SimConfig {
  return { ...cfg, autobucketing: { ...AUTOBUCKETING_PROFILES[profile] } };
}

export function storyRun(id: string, profile: TorchProfile) {
  const story = storyById(id)!;
  const cfg = withProfile(storyConfig(story), profile);
  const { a, b } = run(cfg);
  const d = { a, b, cfg };
  return { story, cfg, a, b, claims: story.claims.map((c) => c(d)), caption: storyCaption(story, d) };
}
