// Public API of the SharedArrayBuffer collectives (all-gather, reduce-scatter, barrier; direct and ring).
export type {
  CollectiveAlgorithm,
  CommInit,
} from './comm_types';
export { createCommInit } from './comm_types';
export { RankComm } from './rank_comm';
