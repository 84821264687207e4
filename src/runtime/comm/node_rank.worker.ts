// Node worker_threads entry for one rank: receives RankJobs, runs their steps on a RankComm over
// the shared buffers, and posts a RankOutcome (results, or the error that stopped it) per job.
// Spawned by node_pool.ts, which waits for its 'ready'; Node-only (tests and bench).

import { parentPort } from 'node:worker_threads';
import { FsdpSimError } from '../../errors';
import type { RankJob, RankOutcome, ScriptStepResult } from './node_script';
import { RankComm } from './rank_comm';

function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function runStep(comm: RankComm, step: RankJob['steps'][number]): ScriptStepResult {
  const n = comm.worldSize;
  switch (step.op) {
    case 'all_gather': {
      const output = new Float32Array(n * step.input.length);
      comm.allGather(step, step.input, output);
      return { op: step.op, output };
    }
    case 'reduce_scatter': {
      const output = new Float32Array(step.input.length / n);
      comm.reduceScatter(step, step.input, output, step.reduce);
      return { op: step.op, output };
    }
    case 'all_reduce': {
      const output = new Float32Array(step.input.length);
      comm.allReduce(step, step.input, output, step.reduce);
      return { op: step.op, output };
    }
    case 'all_to_all': {
      const output = new Float32Array(step.recvSplits.reduce((a, b) => a + b, 0));
      comm.allToAll(step, step.input, output, step.sendSplits, step.recvSplits);
      return { op: step.op, output };
    }
    case 'barrier':
      comm.barrier(step.label);
      return { op: step.op };
    case 'abort':
      comm.abort(step.reason);
      return { op: step.op };
    case 'sleep':
      sleepMs(step.ms);
      return { op: step.op };
    case 'bench': {
      const shard = step.elemsPerRank;
      const full = new Float32Array(n * shard).fill(comm.rank + 1);
      const part = new Float32Array(shard).fill(comm.rank + 1);
      const req = { label: `bench ${step.kind}`, tensors: ['bench'] };
      const once = (): void => {
        if (step.kind === 'all_gather') comm.allGather(req, part, full);
        else comm.reduceScatter(req, full, part, 'sum');
      };
      for (let i = 0; i < step.warmup; i++) once();
      const timesMs: number[] = [];
      for (let i = 0; i < step.iters; i++) {
        const t0 = performance.now();
        once();
        timesMs.push(performance.now() - t0);
      }
      return { op: step.op, timesMs };
    }
  }
}

function runJob(job: RankJob): RankOutcome {
  const t0 = performance.now();
  const results: ScriptStepResult[] = [];
  try {
    const comm = new RankComm(job.init, job.rank);
    for (const step of job.steps) results.push(runStep(comm, step));
    return { rank: job.rank, results, elapsedMs: performance.now() - t0 };
  } catch (e) {
    const err = e as Error;
    const code = e instanceof FsdpSimError ? e.code : undefined;
    return {
      rank: job.rank,
      results,
      error: { name: err.name, code, message: err.message },
      elapsedMs: performance.now() - t0,
    };
  }
}

parentPort?.on('message', (job: RankJob) => {
  parentPort?.postMessage(runJob(job));
});
parentPort?.postMessage('ready');
