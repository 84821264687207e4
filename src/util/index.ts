// Public API of src/util: the small mechanisms every layer shares, each implemented once —
// sizes, durations and percentages and their text, FNV-1a hashing, medians (named by which median
// they are), integer checks, memoisation, sorting short integer lists.
export {
  GIB,
  MIB,
  MISSING,
  byteTicks,
  fixed,
  formatBytes,
  gibText,
  mibText,
  sizeText,
  type ByteTicks,
} from './units';
export { formatDuration, formatTimeTick } from './time';
export { formatPercent, formatShare } from './percent';
export { FNV_OFFSET, fnv1a, fnv1aBytes } from './hash';
export { lowerMedianInPlace, midpointMedian } from './median';
export { intIn } from './checks';
export { LruCache, lruMemo, weakMemo } from './memo';
export { sortAscending } from './sort';
