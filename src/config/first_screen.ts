// What the app opens on when a link names no config: a Llama3-8B step on 8 ranks, where torch's
// pass visibly starts all-gathers early and merges them into buckets on side B, zoomed to the
// first layers so buckets and hidden all-gathers are readable at once. Links, the URL codec and
// the CLI keep DEFAULT_CONFIG (tiny × 4) as the base their keys are written against.

import { DEFAULT_CONFIG, type SimConfig } from './schema';
import { parseConfigQuery, type QueryParse } from './url';

export const FIRST_SCREEN_CONFIG: Readonly<SimConfig> = Object.freeze({
  ...DEFAULT_CONFIG,
  model: 'llama3-8b',
  ranks: 8,
});

/** The first screen's window, as fractions of the longer step: the first few transformer blocks. */
export const FIRST_SCREEN_ZOOM: readonly [number, number] = [0, 0.02];

/**
 * The page's read of a link. One that names its model is read against DEFAULT_CONFIG, as links are
 * written (the app always writes the model); one that names none is read against the first screen,
 * so `?ranks=128` is the bare link's llama3-8b on 128 ranks, not silently the codec's tiny.
 */
export function parseLinkQuery(search: string): QueryParse {
  const q = new URLSearchParams(search.startsWith('?') ? search.slice(1) : search);
  return parseConfigQuery(search, q.has('model') ? DEFAULT_CONFIG : FIRST_SCREEN_CONFIG);
}
