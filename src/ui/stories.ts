// Story presets: a handful of scenarios that each set the config, a zoom (as fractions of the
// step, so it survives any model size), a selection (a predicate on B's events, resolved once
// the simulation lands) and claims: checks on the run's data whose sentences make the caption,
// so every number in it is the run's own. `?story=<id>` alone loads one; the URL then carries
// the config, view and selection as usual, so a link restores it exactly.

import { describeMesh, parseConfigQuery, meshOfParallelism, type SimConfig } from '../config';
import type { Side } from '../store';
import type { TraceEvent } from '../trace';
import { MEMORY_NAMES } from './glossary';
import {
  bHangsANot,
  type ClaimCheck,
  fasterStep,
  fewerAllGathers,
  fewerLaunches,
  hidesExposed,
  othersWaitForStraggler,
  peakRises,
  peakWithinTorchLimit,
  type RunData,
  staysExposed,
} from './claims';
import { allToAllsUnbucketed, epStaysExposed } from './moe_claims';

export interface Story {
  readonly id: string;
  readonly title: string;
  /** Config as a query string over the codec's defaults (model and ranks always named). */
  readonly query: string;
  /** Visible window as fractions of the longer step. */
  readonly zoom: readonly [number, number];
  /** Which event to select once simulated, or none. */
  readonly select?: { readonly side: Side; readonly pick: (e: TraceEvent) => boolean };
  /** What the config sets up, in words (read from the config, true of any run of it). */
  readonly setup: (cfg: SimConfig) => string;
  /** The story's claims: each must hold for its config (a test checks them under every torch profile). */
  readonly claims: readonly ClaimCheck[];
  /** What to try on screen (no numbers). */
  readonly hint?: string;
}

const isAgOnRank0 = (e: TraceEvent) => e.rank === 0 && e.kind === 'all_gather';
const isDispatchOnRank0 = (e: TraceEvent) => e.rank === 0 && /\.moe\.dispatch\.all_to_all$/.test(e.name);
const meshOf = (cfg: SimConfig) => describeMesh(meshOfParallelism(cfg.ranks, cfg.parallelism));
const nodesOf = (cfg: SimConfig) => Math.ceil(cfg.ranks / cfg.parallelism.gpus_per_node);

export const STORIES: readonly Story[] = [
  {
    id: 'overview',
    title: 'What autobucketing does (llama3-8b, 8 ranks)',
    query: 'model=llama3-8b&ranks=8',
    zoom: [0, 0.02],
    select: { side: 'b', pick: isAgOnRank0 },
    setup: (cfg) =>
      `One training step of ${cfg.model} on ${cfg.ranks} GPUs (${meshOf(cfg)}). A issues each all-gather right ` +
      "before the layer that needs it; B runs torch's overlap pass.",
    claims: [fewerAllGathers(0.3), hidesExposed(0.5), fasterStep],
    hint:
      'Click a green all-gather on B: arrows lead to its wait and the layer that uses it; ' +
      'outlined blocks are one bucket.',
  },
  {
    id: 'ranks-64',
    title: 'At 64 ranks communication outgrows compute',
    query: 'model=llama3-8b&ranks=64',
    zoom: [0, 1],
    setup: (cfg) =>
      `The same ${cfg.model} step on ${cfg.ranks} GPUs (${nodesOf(cfg)} nodes): each rank holds ` +
      `1/${cfg.ranks} of the weights, and every collective crosses nodes.`,
    claims: [staysExposed(0.25), hidesExposed(0.3), fewerLaunches],
  },
  {
    id: 'prefetch-memory',
    title: 'Prefetch costs memory (llama3-8b, 8 ranks)',
    query: 'model=llama3-8b&ranks=8',
    zoom: [0, 0.2],
    select: { side: 'b', pick: isAgOnRank0 },
    setup: (cfg) => `${cfg.model} on ${cfg.ranks} ranks; look at ${MEMORY_NAMES.live} in Metrics and the memory chart.`,
    claims: [hidesExposed(0.9), peakRises, peakWithinTorchLimit],
  },
  {
    id: 'slow-network',
    title: 'A slow network (PCIe + 100 GbE)',
    query: 'model=llama3-8b&ranks=8&network=pcie-ethernet',
    zoom: [0, 0.1],
    setup: (cfg) =>
      `${cfg.model} on ${cfg.ranks} ranks over a commodity network (${cfg.network}): ` +
      'collectives take longer than the compute that could hide them.',
    claims: [staysExposed(0.25), hidesExposed(0.2)],
    hint: 'Autobucketing cannot create compute to overlap with.',
  },
  {
    id: 'straggler',
    title: 'One straggler rank',
    query: 'model=tiny&ranks=4&straggler.rank=2&straggler.factor=2',
    zoom: [0, 0.5],
    setup: (cfg) =>
      `Rank ${cfg.straggler.rank} computes ${cfg.straggler.factor}× slower; ` +
      `every collective needs all ${cfg.ranks} ranks.`,
    claims: [othersWaitForStraggler],
  },
  {
    id: 'hang',
    title: 'When ranks disagree, the step hangs',
    // both torch profiles hang here (on the tiny model 2.13's pre-bucketing leaves nothing to disagree on)
    query: 'model=llama3-8b&ranks=8&jitterPct=20&alignment=false&seed=1',
    zoom: [0, 0.3],
    setup: (cfg) =>
      `With ±${cfg.jitterPct} % jitter and cross-rank alignment off, each rank plans buckets from its own timings.`,
    claims: [bHangsANot],
    hint: 'Turn alignment on to fix it.',
  },
  {
    id: 'moe-ep',
    title: 'What the pass can and cannot hide in an MoE step',
    query: 'model=dsv3-debug&ranks=8&parallelism.expert_parallel_degree=2',
    zoom: [0, 0.25],
    select: { side: 'b', pick: isDispatchOnRank0 },
    setup: (cfg) =>
      `${cfg.model} (mixture of experts) on ${cfg.ranks} GPUs (${meshOf(cfg)}): each block's routed tokens go to ` +
      "their experts and back by all-to-all on the ep lane; the experts' weights are sharded on efsdp, the " +
      'dense ones on dp.',
    claims: [epStaysExposed(0.5), allToAllsUnbucketed, fasterStep],
    hint: 'Click a brown all-to-all on B: the details say what it moves and why it cannot start earlier.',
  },
];

/** The caption: the setup, then each claim's sentence as the data decided it, then the hint. */
export function storyCaption(s: Story, d: RunData): string {
  return [s.setup(d.cfg), ...s.claims.map((c) => c(d).text), s.hint ?? ''].filter(Boolean).join(' ');
}

export function storyById(id: string | null | undefined): Story | undefined {
  return STORIES.find((s) => s.id === id);
}

/** The story's config (its query on top of the defaults). Throws when a story names a bad field. */
export function storyConfig(s: Story): SimConfig {
  const { config, errors } = parseConfigQuery(s.query);
  if (errors.length) throw new Error(`story '${s.id}': ${errors.map((e) => e.message).join('; ')}`);
  return config;
}
