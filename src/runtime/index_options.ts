// The live run's options without the runtime: its choices and ranges (live_options.ts) and the
// collective algorithms. The config's live.* knobs read them here (docs/ARCHITECTURE.md §2).

export { KERNEL_CHOICES, MAX_LIVE_STEPS, MAX_SEED, TIMING_MODES } from './live_options';
export type { KernelChoice, TimingMode } from './live_options';
export { COLLECTIVE_ALGORITHMS } from './comm';
export type { CollectiveAlgorithm } from './comm';
