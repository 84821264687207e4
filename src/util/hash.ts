// FNV-1a, 32-bit: a stable hash across engines and runs (seeds of per-name streams, per-node
// jitter, the tensor-list hash ranks compare, the parameters' fingerprint). One loop per input
// kind; the offset basis can be replaced to mix in a seed or to continue an earlier hash.

export const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a over the UTF-16 code units of `s`, from `h`; an unsigned 32-bit integer. */
export function fnv1a(s: string, h = FNV_OFFSET): number {
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, FNV_PRIME);
  }
  return h >>> 0;
}

/** FNV-1a over `bytes`, from `h`; an unsigned 32-bit integer. */
export function fnv1aBytes(bytes: Uint8Array, h = FNV_OFFSET): number {
  for (let i = 0; i < bytes.length; i++) {
    h ^= bytes[i];
    h = Math.imul(h, FNV_PRIME);
  }
  return h >>> 0;
}
