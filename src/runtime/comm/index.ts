// Public API of the SharedArrayBuffer collectives (all-gather, reduce-scatter, barrier; direct and ring).
export type {
  CollectiveAlgorithm,
  CollectiveKind,
  CollectiveDescriptor,
  CollectiveRequest,
  CommInit,
  RankCommApi,
  ReduceOp,
} from './comm_types';
export { COLLECTIVE_ALGORITHMS, DEFAULT_TIMEOUT_MS, createCommInit } from './comm_types';
export { RankComm } from './rank_comm';
export { formatDescriptor, hashTensorNames } from './descriptor';
