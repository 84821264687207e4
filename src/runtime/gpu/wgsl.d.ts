// WGSL sources are imported as strings through Vite's `?raw` suffix (see ./shaders.ts).
declare module '*.wgsl?raw' {
  const source: string;
  export default source;
}
