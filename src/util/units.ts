// Sizes in binary units (torch's "GB" are GiB: gb_to_bytes multiplies by 1024³) and their text.
// Fixed-point numbers go through d3-format with an ASCII hyphen for the minus, so the text is
// what toFixed gave before (the CLI's tables, the explain panel's sentences and tests read it).

import { formatLocale } from 'd3-format';

const KIB = 1024;
export const MIB = 1024 ** 2;
export const GIB = 1024 ** 3;

const LOCALE = formatLocale({ decimal: '.', thousands: ',', grouping: [3], currency: ['', ''], minus: '-' });
const FIXED: ((x: number) => string)[] = [];

/** `x` with `digits` decimals ('1.50'). */
export function fixed(x: number, digits: number): string {
  FIXED[digits] ??= LOCALE.format(`.${digits}f`);
  return FIXED[digits](x);
}

/** Bytes as GiB with `digits` decimals: '79.18 GiB'. */
export function gibText(bytes: number, digits = 2): string {
  return `${fixed(bytes / GIB, digits)} GiB`;
}

/** Bytes as MiB with `digits` decimals: '40.2 MiB'. */
export function mibText(bytes: number, digits = 1): string {
  return `${fixed(bytes / MIB, digits)} MiB`;
}

/** Bytes as KiB with `digits` decimals: '40.0 KiB'. */
export function kibText(bytes: number, digits = 1): string {
  return `${fixed(bytes / KIB, digits)} KiB`;
}

/** Binary units up to EiB: a 70B model's 14 PiB of traffic reads '13.77 PiB', not '14383148.32 GiB'. */
const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'] as const;

/** Bytes in the largest binary unit below them: '416.02 MiB' (a no-break space: never wraps). */
export function formatBytes(b: number): string {
  if (!Number.isFinite(b)) return '–';
  const a = Math.abs(b);
  const k = a < 1024 ? 0 : Math.min(BYTE_UNITS.length - 1, Math.floor(Math.log2(a) / 10));
  const v = b / 2 ** (10 * k);
  if (k === 0) return `${b}\u00a0B`;
  if (Math.abs(v) >= 1e5) return `${v.toExponential(2)}\u00a0${BYTE_UNITS[k]}`; // past EiB
  return `${fixed(v, k === 1 ? 1 : 2)}\u00a0${BYTE_UNITS[k]}`;
}
