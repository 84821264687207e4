// llama3-405b (126 layers, ~16k nodes) on 1024 ranks: graph → every backend → simulation must
// take < 1 s of CPU in Node. Measured after a JIT warm-up on llama3-8b; CPU time (not wall
// time) so that other processes on a shared machine count less. FSDP_SIM_PERF_SLACK scales the
// bound for busy hosts: default 3, because this suite shares 2 cores with ~8 other jobs here (a
// quiet machine measures well under 1 s; set FSDP_SIM_PERF_SLACK=1 there to hold the real target).
import { describe, expect, it } from 'vitest';
import { BACKEND_NAMES, runBackend } from '../../../src/backends';
import { makeCostModel } from '../../../src/estimate';
import { buildStepGraph } from '../../../src/graph';
import type { ModelName } from '../../../src/model';
import { simulate } from '../../../src/sim';

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

function pipeline(model: ModelName, worldSize: number): { totalMs: number; parts: string } {
  const cost = makeCostModel({ hardware: 'h100', network: 'nvlink-ib' });
  const t0 = cpuMs();
  const g = buildStepGraph({ model, worldSize });
  const parts = [`build ${(cpuMs() - t0).toFixed(0)}`];
  for (const b of BACKEND_NAMES) {
    const t = cpuMs();
    const s = runBackend(b, g, cost);
    const t1 = cpuMs();
    simulate({ worldSize, schedules: s, cost });
    parts.push(`${b} ${(t1 - t).toFixed(0)} + sim ${(cpuMs() - t1).toFixed(0)}`);
  }
  return { totalMs: cpuMs() - t0, parts: parts.join(', ') };
}

describe('graph → every backend → simulate', () => {
  it('takes under 1 s of CPU for llama3-405b on 1024 ranks', () => {
    pipeline('llama3-8b', 8); // warm up the JIT
    const slack = Number(process.env.FSDP_SIM_PERF_SLACK ?? 3);
    const best = [pipeline('llama3-405b', 1024), pipeline('llama3-405b', 1024)].sort((a, b) => a.totalMs - b.totalMs)[0];
    expect(best.totalMs, `405b pipeline CPU ms: ${best.totalMs.toFixed(0)} (${best.parts})`).toBeLessThan(1000 * slack);
  });
});
