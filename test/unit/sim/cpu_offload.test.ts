// graph_trainer's sac_and_offload in the simulator: what the host copies take off HBM (memory) and
// what they cost (time: their own stream, one copy at a time, at the preset's host link).
import { describe, expect, it } from 'vitest';
import { runBackend } from '../../../src/backends';
import { HARDWARE_PRESETS, makeCostModel } from '../../../src/estimate';
import {
  buildStepGraph,
  hostTransferOf,
  TRANSFER_STREAM,
  type GraphNode,
  type StepConfig,
  type StepGraph,
} from '../../../src/graph';
import { simulate } from '../../../src/sim';
import { scheduleMemoryProfile } from '../../../src/sim/memory';
import { scheduleAllocations } from '../../../src/sim/allocator';
import { sideStream, type TraceEvent } from '../../../src/trace';

const WORLD = 4;
const graphOf = (memoryPolicy: StepConfig['memoryPolicy']): StepGraph =>
  buildStepGraph({ model: 'small', worldSize: WORLD, compileMode: 'aot_fx_trace', memoryPolicy });
const costAt = (hostLinkBytesPerS?: number) =>
  makeCostModel({
    hardware: { ...HARDWARE_PRESETS.h100, ...(hostLinkBytesPerS === undefined ? {} : { hostLinkBytesPerS }) },
    network: 'nvlink-ib',
  });

function run(g: StepGraph, hostLinkBytesPerS?: number) {
  const cost = costAt(hostLinkBytesPerS);
  const schedule = runBackend('transformer_block', g, cost);
  return { cost, schedule, sim: simulate({ worldSize: WORLD, schedules: schedule, cost, emitRanks: [0] }) };
}

const copies = (g: StepGraph) => g.nodes.filter((n) => hostTransferOf(n) !== undefined);
const offloadedBytes = (g: StepGraph) =>
  g.nodes.filter((n) => hostTransferOf(n) === 'd2h').reduce((s, n) => s + n.bytesMoved, 0);
const onTransferStream = (events: readonly TraceEvent[]) =>
  events.filter((e) => e.stream === sideStream(TRANSFER_STREAM)).sort((a, b) => a.start - b.start);
const eventOf = (events: readonly TraceEvent[], name: string) => events.find((e) => e.name === name);

describe('sac_and_offload memory', () => {
  it('frees every offloaded byte by the end of the forward (program order)', () => {
    const base = graphOf('default');
    const g = graphOf('sac_and_offload');
    const lastForward = base.nodes.findLast((n) => n.phase === 'forward')!.name;
    const at = (x: StepGraph) => scheduleMemoryProfile(x).liveBytes[x.nodes.findIndex((n) => n.name === lastForward)];
    expect(offloadedBytes(g)).toBeGreaterThan(0);
    expect(at(base) - at(g)).toBe(offloadedBytes(g));
  });

  it('lowers the simulated peak by at most the offloaded bytes (what is reloaded by then stays)', () => {
    const base = run(graphOf('default')).sim.memory[0].peakBytes;
    const g = graphOf('sac_and_offload');
    const off = run(g).sim.memory[0].peakBytes;
    expect(off).toBeLessThan(base);
    expect(off).toBeGreaterThanOrEqual(base - offloadedBytes(g));
  });

  it('gives the caching allocator the reloaded tensors and none of the host copies', () => {
    const base = graphOf('default');
    const g = graphOf('sac_and_offload');
    const reloads = g.nodes.filter((n) => hostTransferOf(n) === 'h2d').length;
    expect(scheduleAllocations(g).length).toBe(scheduleAllocations(base).length + reloads);
  });

  it('never lowers the peak on a slower link: slower copies only delay the waits that free HBM', () => {
    const g = graphOf('sac_and_offload');
    const fast = run(g).sim.memory[0].peakBytes;
    const slow = run(g, 1e8).sim.memory[0].peakBytes;
    expect(slow).toBeGreaterThanOrEqual(fast);
  });
});

describe('sac_and_offload time', () => {
  const g = graphOf('sac_and_offload');
  const { cost, sim } = run(g);
  const transfers = onTransferStream(sim.events);
  const byName = new Map(g.nodes.map((n) => [n.name, n]));

  it('runs every copy on the transfer stream, one at a time, each for its bytes over the host link', () => {
    expect(transfers.map((e) => e.name).sort()).toEqual(
      copies(g)
        .map((n) => n.name)
        .sort(),
    );
    for (let k = 1; k < transfers.length; k++) {
      expect(transfers[k].start).toBeGreaterThanOrEqual(transfers[k - 1].start + transfers[k - 1].dur - 1e-6);
    }
    for (const e of transfers) {
      const node = byName.get(e.name)!;
      const pcieUs = (node.bytesMoved / 64e9) * 1e6; // H100: PCIe Gen5 x16, one direction
      expect(e.dur).toBeCloseTo(cost.computeUs(node), 9);
      expect(e.dur).toBeGreaterThan(pcieUs);
      expect(e.dur).toBeLessThan(pcieUs + 10); // + one copy's launch
    }
  });

  it('starts a D2H copy after its producer and every reader of a reloaded tensor after its H2D copy', () => {
    for (const n of copies(g)) {
      const copy = eventOf(transfers, n.name)!;
      const dependsOn = (m: GraphNode) => n.inputs.some((id) => m.outputs.includes(id));
      if (hostTransferOf(n) === 'd2h') {
        const producer = eventOf(sim.events, g.nodes.find(dependsOn)!.name)!;
        expect(copy.start).toBeGreaterThanOrEqual(producer.start + producer.dur - 1e-6);
      }
      if (hostTransferOf(n) !== 'h2d') continue;
      for (const reader of g.nodes.filter((m) => m.inputs.includes(n.outputs[0]))) {
        const e = eventOf(sim.events, reader.name);
        if (e !== undefined) expect(e.start, reader.name).toBeGreaterThanOrEqual(copy.start + copy.dur - 1e-6);
      }
    }
  });

  it('hides the copies behind compute on a PCIe link and exposes them on a slow one', () => {
    const base = run(graphOf('default')).sim.stepUs;
    expect(sim.stepUs).toBeLessThan(base * 1.05);
    const slow = run(g, 1e8).sim;
    const busy = onTransferStream(slow.events).reduce((s, e) => s + e.dur, 0);
    expect(busy).toBeGreaterThan(base);
    expect(slow.stepUs).toBeGreaterThanOrEqual(busy); // one stream: the copies alone take this long
    expect(slow.stepUs).toBeGreaterThan(sim.stepUs);
  });
});
