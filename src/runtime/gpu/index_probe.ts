// The shader-free entry of src/runtime/gpu: what the page and a rank's Web Worker ask before they
// load the kernels (index.ts installs the WGSL sources when it loads).
export { probeAdapter, webGpuMissing } from './device';
export type { AdapterProbe } from './device';
