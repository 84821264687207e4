// Argument checks shared by the MoE kernels (CPU and WGSL hosts): a buffer may be longer than the
// kernel needs, never shorter; an index buffer holds only indices in range. Errors name the buffer.
import { ConfigError } from '../../errors';

/** `field` must hold at least `need` elements. */
export function checkMoeLength(field: string, arr: { readonly length: number }, need: number): void {
  if (arr.length < need) throw new ConfigError(field, `${field} must hold ≥ ${need} elements, got ${arr.length}`);
}

/** The first `count` entries of `field` must be integers in [0, bound). */
export function checkMoeIndex(field: string, idx: Int32Array, count: number, bound: number): void {
  checkMoeLength(field, idx, count);
  for (let i = 0; i < count; i++) {
    if (idx[i] < 0 || idx[i] >= bound) {
      throw new ConfigError(field, `${field}[${i}] must be in [0, ${bound}), got ${idx[i]}`);
    }
  }
}

/** Expert row offsets: E + 1 non-decreasing entries from 0 to `rows`. */
export function checkOffsets(field: string, offsets: Int32Array, experts: number, rows: number): void {
  checkMoeLength(field, offsets, experts + 1);
  const bad = Array.from({ length: experts }, (_, e) => e).find((e) => offsets[e + 1] < offsets[e]);
  if (offsets[0] !== 0 || offsets[experts] !== rows || bad !== undefined) {
    throw new ConfigError(
      field,
      `${field} must rise from 0 to rows=${rows} over ${experts + 1} entries, ` +
        `got [${Array.from(offsets.subarray(0, experts + 1)).join(', ')}]`,
    );
  }
}
