// Array types of the CPU reference kernels: fp32 in the live runtime, fp64 in gradient checks.
export type FArr = Float32Array | Float64Array;
export type IArr = Int32Array;
