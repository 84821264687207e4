// The WGSL sources, one per kernel family (shaders/*.wgsl), imported as strings with `?raw`
// (Vite/Vitest natively; plain Node through ./node_wgsl_loader.ts). Entry points and binding
// numbers are documented in each file's header; the host side is ./ops.ts.
import adamw from '../../../shaders/adamw.wgsl?raw';
import add from '../../../shaders/add.wgsl?raw';
import attention from '../../../shaders/attention.wgsl?raw';
import crossEntropy from '../../../shaders/cross_entropy.wgsl?raw';
import embedding from '../../../shaders/embedding.wgsl?raw';
import matmul1 from '../../../shaders/matmul_1_naive.wgsl?raw';
import matmul2 from '../../../shaders/matmul_2_tiled.wgsl?raw';
import matmul3 from '../../../shaders/matmul_3_blocked.wgsl?raw';
import rmsNorm from '../../../shaders/rms_norm.wgsl?raw';
import swiglu from '../../../shaders/swiglu.wgsl?raw';
import type { ShaderName } from './shader_registry';

export const SHADERS: Readonly<Record<ShaderName, string>> = {
  matmul_1_naive: matmul1,
  matmul_2_tiled: matmul2,
  matmul_3_blocked: matmul3,
  embedding,
  rms_norm: rmsNorm,
  swiglu,
  attention,
  add,
  cross_entropy: crossEntropy,
  adamw,
};
