// Story presets: a handful of scenarios that each set the config, a zoom (as fractions of the
// step, so it survives any model size), a selection (a predicate on B's events, resolved once
// the simulation lands) and a caption saying what to look at. `?story=<id>` alone loads one;
// the URL then carries the config, view and selection as usual, so a link restores it exactly.

import { parseConfigQuery, type SimConfig } from '../config';
import type { Side } from '../store';
import type { TraceEvent } from '../trace/event';

export interface Story {
  readonly id: string;
  readonly title: string;
  readonly caption: string;
  /** Config as a query string (non-default fields only). */
  readonly query: string;
  /** Visible window as fractions of the longer step. */
  readonly zoom: readonly [number, number];
  /** Which event to select once simulated, or none. */
  readonly select?: { readonly side: Side; readonly pick: (e: TraceEvent) => boolean };
}

const isAgOnRank0 = (e: TraceEvent) => e.rank === 0 && e.kind === 'all_gather';

export const STORIES: readonly Story[] = [
  {
    id: 'overview',
    title: 'What autobucketing does (4 ranks)',
    caption: 'A waits on every all-gather right before its layer (red waits); B starts them early and merges small ones into buckets, so the network works while the GPU computes. Click a green all-gather on B: arrows lead to its wait and the layer that uses it.',
    query: '',
    zoom: [0, 0.35],
    select: { side: 'b', pick: isAgOnRank0 },
  },
  {
    id: 'ranks-64',
    title: 'Bucketing matters more at 64 ranks',
    caption: 'With 64 ranks a ring collective takes 63 steps, each paying the link latency α, so small collectives cost latency, not bandwidth. There is too little compute to hide them; what still helps is fewer launches: compare the all-gather counts.',
    query: 'ranks=64',
    zoom: [0, 1],
  },
  {
    id: 'prefetch-memory',
    title: 'Prefetch costs memory (llama3-8b, 8 ranks)',
    caption: 'Every all-gather B starts early keeps a full weight alive longer. Look at peak memory in Metrics and the memory chart: B pays ~1.4 GiB to hide almost all communication, inside torch\'s limit (max_memory_increase_gb / _ratio).',
    query: 'model=llama3-8b&ranks=8',
    zoom: [0, 0.2],
    select: { side: 'b', pick: isAgOnRank0 },
  },
  {
    id: 'slow-network',
    title: 'A slow network (PCIe + 100 GbE)',
    caption: 'On a commodity network collectives take longer than the compute that could hide them: even B leaves much of the communication exposed (red bands). Autobucketing cannot create compute to overlap with.',
    query: 'ranks=8&network=pcie-ethernet',
    zoom: [0, 0.5],
  },
  {
    id: 'straggler',
    title: 'One straggler rank',
    caption: 'Rank 2 computes 2× slower. Every collective needs all ranks, so the others sit in waits until rank 2 arrives: the slowest rank sets the step time for everyone.',
    query: 'straggler.rank=2&straggler.factor=2',
    zoom: [0, 0.5],
  },
  {
    id: 'hang',
    title: 'When ranks disagree, the step hangs',
    caption: 'With ±20 % jitter and cross-rank alignment off, each rank plans buckets from its own timings, and rank 3 issues a different all-gather than rank 0. On real GPUs NCCL would hang; the marker shows where. Turn alignment on to fix it.',
    query: 'jitterPct=20&alignment=false',
    zoom: [0, 0.3],
  },
];

export function storyById(id: string | null | undefined): Story | undefined {
  return STORIES.find((s) => s.id === id);
}

/** The story's config (its query on top of the defaults). Throws when a story names a bad field. */
export function storyConfig(s: Story): SimConfig {
  const { config, errors } = parseConfigQuery(s.query);
  if (errors.length) throw new Error(`story '${s.id}': ${errors.map((e) => e.message).join('; ')}`);
  return config;
}
