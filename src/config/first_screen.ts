// What the app opens on when a link names no config: a Llama3-8B step on 8 ranks, where torch's
// pass visibly starts all-gathers early and merges them into buckets on side B, zoomed to the
// first layers so buckets and hidden all-gathers are readable at once. Links, the URL codec and
// the CLI keep DEFAULT_CONFIG (tiny × 4) as the base their keys are written against.

import { DEFAULT_CONFIG, type SimConfig } from './schema';

export const FIRST_SCREEN_CONFIG: Readonly<SimConfig> = Object.freeze({
  ...DEFAULT_CONFIG,
  model: 'llama3-8b',
  ranks: 8,
});

/** The first screen's window, as fractions of the longer step: the first few transformer blocks. */
export const FIRST_SCREEN_ZOOM: readonly [number, number] = [0, 0.02];
