// Public API of the SharedArrayBuffer collectives (all-gather, reduce-scatter, barrier; direct and ring).
export type {
  CollectiveAlgorithm,
  CollectiveRequest,
  CommInit,
  RankCommApi,
} from './comm_types';
export { COLLECTIVE_ALGORITHMS, createCommInit } from './comm_types';
export { RankComm } from './rank_comm';
export { fixedSpinUs } from './sync';
