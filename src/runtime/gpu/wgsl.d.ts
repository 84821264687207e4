// WGSL sources are imported as strings through Vite's `?raw` suffix (vite build, vitest, and
// Node via the loader in node_raw_loader.mjs).
declare module '*.wgsl?raw' {
  const source: string;
  export default source;
}
