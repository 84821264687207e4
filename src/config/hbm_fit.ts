// Does a step fit in HBM? The simulated peak live bytes of one rank against the chosen hardware
// preset's HBM capacity (estimate/hardware.ts). Pure; the CLI compare table and the app's
// metrics table both show it, naming both numbers.

import { HARDWARE_PRESETS, type HardwareName } from '../estimate';

const GIB = 1024 ** 3;

export interface HbmFit {
  readonly hardware: HardwareName;
  readonly peakBytes: number;
  /** The preset's HBM capacity, bytes (decimal GB on the datasheet: H100 80 GB = 80e9 bytes). */
  readonly hbmBytes: number;
  /** peakBytes ≤ hbmBytes; true when the peak is unknown (NaN): no claim either way. */
  readonly fits: boolean;
}

export function hbmFit(peakBytes: number, hardware: HardwareName): HbmFit {
  const hbmBytes = HARDWARE_PRESETS[hardware].hbmBytes;
  return { hardware, peakBytes, hbmBytes, fits: !(peakBytes > hbmBytes) };
}

/** `peak 84.57 GiB > h100 HBM 74.51 GiB (80 GB)`, or the ≤ form when it fits. */
export function describeHbmFit(f: HbmFit): string {
  const gb = Math.round(f.hbmBytes / 1e9);
  return `peak ${(f.peakBytes / GIB).toFixed(2)} GiB ${f.fits ? '≤' : '>'} ${f.hardware} HBM ${(f.hbmBytes / GIB).toFixed(2)} GiB (${gb} GB)`;
}
