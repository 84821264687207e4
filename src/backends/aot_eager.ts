// aot_eager: torch.compile's eager-through-AOTAutograd backend. No reordering pass runs, so
// SimpleFSDP's collectives sit where the program put them and each wait_tensor comes right after
// its collective: nothing overlaps. We keep program order and only move every wait up to
// directly after its collective (moving waits, nothing else), except the waits graph_trainer's EP
// overlap pass placed (ep_overlap.ts: it runs last in that pass list, so its order is the graph's).

import type { CostModel } from '../estimate';
import type { StepGraph } from '../graph';
import { indexGraph } from './graph_index';
import { resolveOptions } from './knob_specs';
import { nodeItems, rewriteGraph } from './rewrite';
import type { Backend, Reason, Schedule } from './schedule_types';

export type AotEagerOptions = Record<string, never>;

export function runAotEager(graph: StepGraph, _cost: CostModel, options?: Partial<AotEagerOptions>): Schedule {
  const opts = resolveOptions('aot_eager', {}, {}, options as Record<string, unknown> | undefined);
  const index = indexGraph(graph);
  const order: number[] = [];
  const placed = new Uint8Array(index.n);
  const reasons: Reason[] = [];
  for (let i = 0; i < index.n; i++) {
    if (placed[i]) continue;
    order.push(i);
    placed[i] = 1;
    const w = index.waitOfColl[i];
    if (w >= 0 && !placed[w] && index.nodes[i].attrs?.chunk === undefined) {
      // a wait depends only on its collective (checked by indexGraph), so it can follow at once
      order.push(w);
      placed[w] = 1;
      reasons.push({
        node: index.nodes[i].name,
        code: 'program_order',
        detail: { kind: 'program_position', coll: index.nodes[i].collective!.kind },
      });
    }
  }
  const { graph: out } = rewriteGraph(index, nodeItems(order), []);
  return { backend: 'aot_eager', graph: out, buckets: [], reasons, options: opts };
}

export const aotEager: Backend<AotEagerOptions> = { name: 'aot_eager', run: runAotEager };
