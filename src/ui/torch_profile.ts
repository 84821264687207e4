// Which torch knob profile drew a side: an autobucketing side is torch's pass run with some
// torch version's knobs (2.15's by default), and its numbers follow them, so its header says which.

import type { SideResult } from '../store';

/** 'knobs: torch 2.15' (or 'knobs: custom, neither torch profile'); '' for a side no autobucketing pass drew. */
export function profileWords(r: SideResult): string {
  const p = r.schedule?.torchProfile;
  if (p === undefined) return '';
  return p === 'custom' ? 'knobs: custom, neither torch profile' : `knobs: ${p.replace(/^torch-/, 'torch ')}`;
}
