// Packs a WGSL `struct Params` (all 4-byte u32/f32 fields, in declaration order) into bytes,
// padded to 16-byte multiples as uniform buffers require.
export type Field = readonly ['u32' | 'f32', number];

export function packParams(fields: readonly Field[]): ArrayBuffer {
  const words = Math.max(4, Math.ceil(fields.length / 4) * 4);
  const buf = new ArrayBuffer(words * 4);
  const u = new Uint32Array(buf);
  const f = new Float32Array(buf);
  fields.forEach(([type, v], i) => {
    if (type === 'u32') u[i] = v >>> 0;
    else f[i] = v;
  });
  return buf;
}

export const u32 = (v: number): Field => ['u32', v];
export const f32 = (v: number): Field => ['f32', v];
