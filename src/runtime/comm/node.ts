// Node-only entry of the comm folder (worker_threads pool, scripts, bench timing). Kept out of
// index.ts so the browser bundle never pulls in node:worker_threads.
export { NodeRankPool } from './node_pool';
export type { RankOutcome, RankStep } from './node_script';
export { benchCollective, memcpyBaseline } from './node_bench';
