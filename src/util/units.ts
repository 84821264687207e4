// Sizes in binary units (torch's "GB" are GiB: gb_to_bytes multiplies by 1024³) and their text.
// Fixed-point numbers go through d3-format with an ASCII hyphen for the minus, so the text is
// what toFixed gave before (the CLI's tables, the explain panel's sentences and tests read it).

import { nice, tickStep, ticks } from 'd3-array';
import { formatLocale } from 'd3-format';

const KIB = 1024;
export const MIB = 1024 ** 2;
export const GIB = 1024 ** 3;

const LOCALE = formatLocale({ decimal: '.', thousands: ',', grouping: [3], currency: ['', ''], minus: '-' });
const FIXED: ((x: number) => string)[] = [];

/** The text of a missing or non-finite figure, on screen and in the command line alike. */
export const MISSING = '–';

/** `x` with `digits` decimals ('1.50'); MISSING when x is not finite. */
export function fixed(x: number, digits: number): string {
  if (!Number.isFinite(x)) return MISSING;
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
function kibText(bytes: number, digits = 1): string {
  return `${fixed(bytes / KIB, digits)} KiB`;
}

/**
 * Bytes for a sentence beside torch's GB knobs (GB are GiB: gb_to_bytes multiplies by 1024³): GiB from
 * 0.1 GiB ('0.50 GiB', '12.5 GiB'), then MiB, then KiB, so a 40 KiB bucket is not '0.0 GiB'.
 */
export function sizeText(bytes: number): string {
  if (bytes >= 0.1 * GIB) return gibText(bytes, bytes >= 10 * GIB ? 1 : 2);
  return bytes >= 0.1 * MIB ? mibText(bytes) : kibText(bytes);
}

/** Binary units up to EiB: a 70B model's 14 PiB of traffic reads '13.77 PiB', not '14383148.32 GiB'. */
const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'] as const;

/** The index in BYTE_UNITS of the largest binary unit below |b|. */
function byteUnitIndex(b: number): number {
  const a = Math.abs(b);
  return a < 1024 ? 0 : Math.min(BYTE_UNITS.length - 1, Math.floor(Math.log2(a) / 10));
}

/** Bytes in the largest binary unit below them: '416.02 MiB' (a no-break space: never wraps). */
export function formatBytes(b: number): string {
  if (!Number.isFinite(b)) return MISSING;
  const k = byteUnitIndex(b);
  const v = b / 2 ** (10 * k);
  if (k === 0) return `${b}\u00a0B`;
  if (Math.abs(v) >= 1e5) return `${v.toExponential(2)}\u00a0${BYTE_UNITS[k]}`; // past EiB
  return `${fixed(v, k === 1 ? 1 : 2)}\u00a0${BYTE_UNITS[k]}`;
}

/** An axis over sizes: its niced domain and ticks (bytes) and each tick's label. */
export interface ByteTicks {
  readonly domain: readonly [number, number];
  readonly ticks: readonly number[];
  readonly label: (bytes: number) => string;
}

/**
 * About `count` round ticks over [lo, hi] bytes: d3's nice ticks on the values in the binary unit of
 * the larger end (GiB, not bytes: 0, 10, 20, 30 GiB rather than 9.31, 18.63, 27.94 GiB, which are
 * round numbers of bytes), labelled with the decimals the tick step needs ('10 GiB', '2.5 GiB').
 */
export function byteTicks(lo: number, hi: number, count: number): ByteTicks {
  const k = byteUnitIndex(Math.max(Math.abs(lo), Math.abs(hi)));
  const per = 2 ** (10 * k);
  const [a, b] = nice(lo / per, hi / per, count);
  const step = tickStep(a, b, count);
  const digits = step > 0 ? Math.max(0, Math.ceil(-Math.log10(step) - 1e-9)) : 0;
  return {
    domain: [a * per, b * per],
    ticks: ticks(a, b, count).map((v) => v * per),
    label: (bytes) => `${fixed(bytes / per, digits)}\u00a0${BYTE_UNITS[k]}`,
  };
}
