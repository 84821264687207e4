// Synthetic Kineto traces of a known run: the simulator's own step of CFG with its compute
// kernels scaled per op class (SCALES) and its collectives timed by the ring model (ALPHA_US,
// BETA), ±0.5 % deterministic noise, STEPS ProfilerSteps; for the calibration tests.
import { defaultConfig, type SimConfig } from '../../src/config';
import { buildGraph, runPipeline } from '../../src/pipeline';
import { modelUs, opClassOfOp } from '../../src/pipeline/calibrate';
import type { OpClass } from '../../src/pipeline/calibrate_kineto';

export const CFG: SimConfig = { ...defaultConfig(), model: 'small', ranks: 4 };
export const ALPHA_US = 4;
export const BETA = 50e9; // bytes/s
export const SCALES: Record<OpClass, number> = {
  matmul: 1.7,
  attention: 2.4,
  elementwise: 0.8,
};
export const KERNEL: Record<OpClass, string> = {
  matmul: 'sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_cublas',
  attention: 'void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>(Flash_fwd_params)',
  elementwise: 'void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>>',
};
const NCCL = {
  all_gather: 'ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)',
  reduce_scatter: 'ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)',
};
export const STEPS = 2;

/** ±0.5 %, deterministic. */
const noise = (i: number) => 1 + 0.005 * Math.sin(i * 12.9898);

/** One rank's Kineto trace of STEPS steps; sizes on the kernel (`onKernel`) or on record_param_comms. */
export function kinetoRank(rank: number, onKernel: boolean): object {
  const compute = runPipeline(CFG, 'aot_eager', {
    emitRanks: [0],
  }).sim.events.filter((e) => e.kind === 'compute');
  const colls = buildGraph(CFG).nodes.filter((n) => n.collective);
  const ev: object[] = [];
  let t = 0;
  let corr = 1;
  let i = rank * 7919;
  for (let s = 0; s < STEPS; s++) {
    const start = t;
    for (const e of compute) {
      const cls = opClassOfOp(e.op ?? '');
      const dur = SCALES[cls] * e.dur * noise(i++);
      ev.push({
        ph: 'X',
        cat: 'kernel',
        name: KERNEL[cls],
        pid: 0,
        tid: 7,
        ts: t,
        dur,
        args: { stream: 7, correlation: corr++ },
      });
      t += dur + 1;
    }
    for (const n of colls) {
      const c = n.collective!;
      const kind = c.kind as 'all_gather' | 'reduce_scatter';
      const size = c.dtype === 'bf16' ? 2 : 4;
      const sample = {
        kind,
        groupSize: c.groupSize,
        bytes: kind === 'all_gather' ? c.outputBytes : c.inputBytes,
      };
      const dur = modelUs(sample, ALPHA_US, BETA) * noise(i++);
      const args = {
        'Collective name': kind,
        'In msg nelems': c.inputBytes / size,
        'Out msg nelems': c.outputBytes / size,
        'Group size': c.groupSize,
        dtype: c.dtype === 'bf16' ? 'BFloat16' : 'Float',
        'Process Group Name': '0',
      };
      const id = corr++;
      if (!onKernel) {
        ev.push({
          ph: 'X',
          cat: 'cpu_op',
          name: 'record_param_comms',
          pid: 100,
          tid: 100,
          ts: t,
          dur: 5,
          args,
        });
        ev.push({
          ph: 'X',
          cat: 'cuda_runtime',
          name: 'cudaLaunchKernel',
          pid: 100,
          tid: 100,
          ts: t + 1,
          dur: 2,
          args: { correlation: id },
        });
      }
      ev.push({
        ph: 'X',
        cat: 'kernel',
        name: NCCL[kind],
        pid: 0,
        tid: 20,
        ts: t + 3,
        dur,
        args: { stream: 20, correlation: id, ...(onKernel ? args : {}) },
      });
      t += 10;
    }
    ev.push({
      ph: 'X',
      cat: 'user_annotation',
      name: `ProfilerStep#${s}`,
      pid: 100,
      tid: 100,
      ts: start,
      dur: t - start,
    });
  }
  // a send/recv has no ring model here: left out and counted
  ev.push({
    ph: 'X',
    cat: 'kernel',
    name: 'ncclDevKernel_SendRecv(ncclDevComm*)',
    pid: 0,
    tid: 21,
    ts: t,
    dur: 50,
    args: { stream: 21, correlation: corr++ },
  });
  return { traceEvents: ev, distributedInfo: { rank, world_size: CFG.ranks } }; // ranks 0 and 1 of CFG's run
}

export const kinetoFiles = (onKernel: boolean) =>
  [0, 1].map((r) => ({
    name: `rank${r}.pt.trace.json`,
    json: kinetoRank(r, onKernel),
  }));

/**
 * One rank of a large trace, built directly (no simulation): `kernels` GEMM kernels and
 * `collectives` all-gathers on a group of 8, sized 1..4 MiB in turn and timed by the ring model
 * (ALPHA_US, BETA), their sizes on a record_param_comms around each launch (one CPU thread).
 */
export function bigKinetoRank(kernels: number, collectives: number): object {
  const ev: object[] = [];
  for (let i = 0; i < kernels; i++)
    ev.push({
      ph: 'X',
      cat: 'kernel',
      name: KERNEL.matmul,
      pid: 0,
      tid: 7,
      ts: i * 10,
      dur: 5,
      args: { stream: 7, correlation: i + 1 },
    });
  for (let i = 0; i < collectives; i++) {
    const bytes = (1 + (i % 4)) << 20;
    const corr = kernels + i + 1;
    const t = i * 20;
    const args = {
      'Collective name': 'allgather_into_tensor',
      'In msg nelems': bytes / 16,
      'Out msg nelems': bytes / 2,
      'Group size': 8,
      dtype: 'BFloat16',
      'Process Group Name': '0',
    };
    ev.push({ ph: 'X', cat: 'cpu_op', name: 'record_param_comms', pid: 1, tid: 1, ts: t, dur: 5, args });
    ev.push({
      ph: 'X',
      cat: 'cuda_runtime',
      name: 'cudaLaunchKernel',
      pid: 1,
      tid: 1,
      ts: t + 1,
      dur: 2,
      args: { correlation: corr },
    });
    const dur = modelUs({ kind: 'all_gather', groupSize: 8, bytes }, ALPHA_US, BETA);
    ev.push({
      ph: 'X',
      cat: 'kernel',
      name: NCCL.all_gather,
      pid: 0,
      tid: 20,
      ts: t + 3,
      dur,
      args: { stream: 20, correlation: corr },
    });
  }
  return { traceEvents: ev, distributedInfo: { rank: 0, world_size: 8 } };
}
