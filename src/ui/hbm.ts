// Does a side's step fit in the hardware's HBM? The one check the metrics table, the timelines'
// heads, the memory chart and the headline share: the caching allocator's reserved peak where the
// side has one (what torch runs out of), else the live tensors' peak; unknown peaks make no claim.

import { hbmFit, type HbmFit } from '../config';
import type { HardwareName } from '../estimate';
import type { SideResult } from '../store';
import { fmtBytes } from './ui_format';

/** The peak an HBM-fit check uses, bytes; NaN when unknown. */
export function hbmPeakOf(r: SideResult): number {
  return r.allocator?.peakReservedBytes ?? (r.memory.length ? r.metrics.peakMemoryBytes : NaN);
}

/** The side's fit (fits is true when its peak is unknown); null without a side. */
export function sideHbmFit(r: SideResult | null | undefined, hardware: HardwareName): HbmFit | null {
  return r ? hbmFit(hbmPeakOf(r), hardware) : null;
}

/** `peak 234.24 GiB = 2.96 × h100 HBM (79.18 GiB)`: how far over, in the HBMs it would take. */
export function overHbmWords(f: HbmFit): string {
  const times = (f.peakBytes / f.hbmBytes).toFixed(2);
  return `peak ${fmtBytes(f.peakBytes)} = ${times} × ${f.hardware} HBM (${fmtBytes(f.hbmBytes)})`;
}
