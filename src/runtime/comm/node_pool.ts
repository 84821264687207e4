// A pool of N Node worker_threads, one per rank, for the comm tests and the bench: each `run`
// posts one RankJob per rank over a fresh CommInit and resolves with every rank's RankOutcome.
// Workers load node_rank.worker.ts bundled into one plain module (../bundled_entry.ts), which
// works inside Vitest's forks pool and under `node --import tsx`. Node-only.

import { Worker } from 'node:worker_threads';
import { CollectiveError } from '../../errors';
import { bundledEntryUrl } from '../bundled_entry';
import type { RankJob, RankOutcome, RankStep } from './node_script';
import type { CommInit } from './comm_types';

const WORKER_URL = new URL('./node_rank.worker.ts', import.meta.url);

function once<T>(w: Worker): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onMsg = (m: T): void => {
      w.off('error', onErr);
      w.off('exit', onExit);
      resolve(m);
    };
    const onErr = (e: Error): void => {
      w.off('message', onMsg);
      w.off('exit', onExit);
      reject(e);
    };
    const onExit = (code: number): void => {
      w.off('message', onMsg);
      w.off('error', onErr);
      reject(new CollectiveError('worker_exit', `rank worker exited with code ${code} before answering`));
    };
    w.once('message', onMsg);
    w.once('error', onErr);
    w.once('exit', onExit);
  });
}

export class NodeRankPool {
  private closed = false;

  private constructor(private readonly workers: readonly Worker[]) {}

  /** Spawn `worldSize` rank workers and wait until each has loaded RankComm. */
  static async create(worldSize: number): Promise<NodeRankPool> {
    const url = await bundledEntryUrl(WORKER_URL);
    const workers = Array.from({ length: worldSize }, () => new Worker(url));
    try {
      await Promise.all(workers.map((w) => once<string>(w)));
    } catch (e) {
      await Promise.all(workers.map((w) => w.terminate()));
      throw e;
    }
    return new NodeRankPool(workers);
  }

  get size(): number {
    return this.workers.length;
  }

  /**
   * Run `steps[r]` on rank r (ranks beyond steps.length get no steps: a rank that never arrives).
   * Resolves once every rank has answered; comm timeouts guarantee they all do.
   */
  async run(init: CommInit, steps: readonly (readonly RankStep[])[]): Promise<RankOutcome[]> {
    if (this.closed) throw new CollectiveError('pool_closed', 'NodeRankPool.run after close()');
    if (init.worldSize > this.workers.length) {
      throw new CollectiveError(
        'collective_config',
        `CommInit.worldSize=${init.worldSize} exceeds the pool's ${this.workers.length} workers`,
      );
    }
    const jobs = Array.from({ length: init.worldSize }, (_, rank) => {
      const job: RankJob = { init, rank, steps: steps[rank] ?? [] };
      const answer = once<RankOutcome>(this.workers[rank]);
      this.workers[rank].postMessage(job);
      return answer;
    });
    return Promise.all(jobs);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
