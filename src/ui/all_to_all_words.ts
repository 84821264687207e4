// What an MoE all-to-all moves and why it stays exposed, in words from the event, the config and the
// backend's reasons (docs/moe.md: dispatch / combine on the `ep` group, ep consecutive ranks).

import type { SimConfig } from '../config';
import { getModelArgs } from '../model';
import { DTYPE_BYTES, type Reason } from '../store';
import type { TraceEvent } from '../trace';
import { fmtBytes } from './ui_format';

/** The ranks of `rank`'s ep group: ep consecutive ranks (ep is the mesh's innermost dim). */
function epGroupOf(rank: number, ep: number): number[] {
  const first = Math.floor(rank / ep) * ep;
  return Array.from({ length: ep }, (_, i) => first + i);
}

/** 'ranks 0, 1' — the peers this rank sends to and receives from. */
function peersText(rank: number, ep: number): string {
  const peers = epGroupOf(rank, ep).filter((r) => r !== rank);
  return `${peers.length === 1 ? 'rank' : 'ranks'} ${peers.join(', ')}`;
}

/** What the all-to-all carries: the per-expert counts, or rows × hidden × dtype bytes, and with whom. */
export function allToAllMoves(e: TraceEvent, cfg: SimConfig): string {
  const ep = cfg.parallelism.expert_parallel_degree;
  const bytes = e.bytes ?? 0;
  const peers = `exchanged with ${peersText(e.rank, ep)} of its ep group of ${ep}`;
  if (/\.counts\./.test(e.name)) return `${fmtBytes(bytes)}: the token count per expert, ${peers}`;
  const args = getModelArgs(cfg.model);
  const elem = DTYPE_BYTES[cfg.paramDtype]; // token rows run in the param dtype (mixed precision)
  const rows = bytes / (args.dim * elem);
  if (!Number.isInteger(rows) || !args.moe) return `${fmtBytes(bytes)} per rank, ${peers}`;
  const tokens = rows / args.moe.topK;
  return (
    `${fmtBytes(bytes)} per rank: ${rows.toLocaleString('en-US')} token rows ` +
    `(${tokens.toLocaleString('en-US')} tokens × top-${args.moe.topK}) × hidden ${args.dim} × ` +
    `${elem} B (${cfg.paramDtype}), ${peers}`
  );
}

/** Why the all-to-all is (or is not) hidden, from the backend's reasons for it. */
export function allToAllExposure(reasons: readonly Reason[]): string {
  const never = "torch's pass never buckets an all-to-all (its bucketing knows no all_to_all_single)";
  if (reasons.some((r) => r.code === 'not_prefetched_depends_on_compute')) {
    return (
      `Exposed: its input is the router's output, permuted just before it, so there is nothing to ` +
      `prefetch; only independent compute (the shared experts) can run under it; ${never}.`
    );
  }
  if (reasons.some((r) => r.code === 'prefetched')) {
    return `Started early, behind compute that does not need its result; ${never}.`;
  }
  return `Issued where the program has it, waited on at once; ${never}.`;
}
