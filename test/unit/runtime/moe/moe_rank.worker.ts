// Node worker_threads entry for one rank of the expert-parallel MoE tests: runs a MoeJob on the
// shared communicator and posts its MoeRun, or the error that stopped it.
import { parentPort } from 'node:worker_threads';
import { type MoeJob, runMoeJob } from './moe_train';

parentPort?.on('message', (job: MoeJob) => {
  try {
    parentPort?.postMessage({ run: runMoeJob(job) });
  } catch (e) {
    parentPort?.postMessage({ error: `rank ${job.rank}: ${(e as Error).message}` });
  }
});
