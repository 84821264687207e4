// GPUBufferUsage / GPUMapMode bit values from the WebGPU spec, as plain constants: the globals
// exist only where WebGPU is installed (in Node, only after the `webgpu` package's globals).
export const USAGE = {
  MAP_READ: 0x0001,
  COPY_SRC: 0x0004,
  COPY_DST: 0x0008,
  UNIFORM: 0x0040,
  STORAGE: 0x0080,
  QUERY_RESOLVE: 0x0200,
} as const;

export const MAP_READ_MODE = 0x0001; // GPUMapMode.READ
