// Does a step fit in HBM? A peak of one rank — the caching allocator's *reserved* peak where it is
// known (what torch runs out of), else the simulated live bytes — against the hardware preset's
// capacity as torch.cuda reports it (estimate/hardware.ts). Pure; the CLI compare table and the
// app's metrics table both show it, naming both numbers.

import { HARDWARE_PRESETS, type HardwareName } from '../estimate';
import { gibText } from '../util';

export interface HbmFit {
  readonly hardware: HardwareName;
  readonly peakBytes: number;
  /** The preset's HBM capacity as torch.cuda reports it, bytes (an 80 GB H100: 79.18 GiB). */
  readonly hbmBytes: number;
  /** peakBytes ≤ hbmBytes; true when the peak is unknown (NaN): no claim either way. */
  readonly fits: boolean;
}

export function hbmFit(peakBytes: number, hardware: HardwareName): HbmFit {
  const hbmBytes = HARDWARE_PRESETS[hardware].hbmBytes;
  return { hardware, peakBytes, hbmBytes, fits: !(peakBytes > hbmBytes) };
}

/** `peak 84.57 GiB > h100 HBM 79.18 GiB (80 GB)`, or the ≤ form when it fits; `what` names the peak. */
export function describeHbmFit(f: HbmFit, what = 'peak'): string {
  const gb = HARDWARE_PRESETS[f.hardware].hbmDatasheetGB;
  return `${what} ${gibText(f.peakBytes)} ${f.fits ? '≤' : '>'} ${f.hardware} HBM ${gibText(f.hbmBytes)} (${gb} GB)`;
}
