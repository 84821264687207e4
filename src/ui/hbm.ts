// Does a side's step fit in the hardware's HBM? The one check the metrics table, the timelines'
// heads, the memory chart and the headline share: the caching allocator's reserved peak where the
// side has one (what torch runs out of), else the live tensors' peak; unknown peaks make no claim,
// and neither does a step that hangs (its allocator peaks are a full step's, its curve a part).

import { hbmFit, type HbmFit } from '../config';
import type { HardwareName } from '../estimate';
import type { SideResult } from '../store';
import { MEMORY_NAMES } from './glossary';
import { fmtBytes } from './ui_format';
import { fixed } from '../util';

/** An HBM fit that names the peak it checked ('peak reserved' or 'peak live tensors'). */
export interface NamedHbmFit extends HbmFit {
  readonly what: string;
}

/** The peak an HBM-fit check uses, bytes; NaN when unknown or when the side's step hangs. */
export function hbmPeakOf(r: SideResult): number {
  if (r.mismatch) return NaN; // not a full step: no peak of one
  return r.allocator?.peakReservedBytes ?? (r.memory.length ? r.metrics.peakMemoryBytes : NaN);
}

/** The side's fit (fits is true when its peak is unknown); null without a side. */
export function sideHbmFit(r: SideResult | null | undefined, hardware: HardwareName): NamedHbmFit | null {
  if (!r) return null;
  const what = r.allocator ? MEMORY_NAMES.reserved : MEMORY_NAMES.live;
  return { ...hbmFit(hbmPeakOf(r), hardware), what };
}

/** `peak reserved 234.24 GiB = 2.96 × h100 HBM (79.18 GiB)`: how far over, in the HBMs it would take. */
export function overHbmWords(f: HbmFit & { readonly what?: string }): string {
  const times = fixed(f.peakBytes / f.hbmBytes, 2);
  return `${f.what ?? 'peak'} ${fmtBytes(f.peakBytes)} = ${times} × ${f.hardware} HBM (${fmtBytes(f.hbmBytes)})`;
}
