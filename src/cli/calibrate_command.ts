// `fsdp-sim calibrate FILE...`: fit the simulator's ring model (α, β per process group) and a time
// scale per op class to a real run's Kineto traces (one file per rank), against the config of that
// run (--model, --ranks, ... as for compare).

import { calibrate, calibrateKeep, type Calibration, TraceSampleReader } from '../pipeline';
import { assumptionText, unfittedText, wordedCalibration } from '../words';
import { CONFIG_OPTIONS, UsageError, configFromFlags, parseFlags } from './flags';
import { stdinOnce, type Io } from './io';
import { readTraceFiles } from './trace_input';
import { formatPercent, MISSING, fixed } from '../util';

const CALIBRATE_OPTIONS = {
  ...CONFIG_OPTIONS,
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const CALIBRATE_USAGE = [
  'usage: fsdp-sim calibrate FILE... [--model NAME] [--ranks N] [config flags] [--json]',
  '',
  "Fit the ring model T = (n−1)·α + ((n−1)/n)·S/β (all-reduce: twice) to each process group's NCCL",
  "collectives in PyTorch-profiler traces (.json / .json.gz, one per rank; sizes from the kernel's",
  'args or its record_param_comms), and a time scale per op class (matmul, attention, elementwise):',
  "the trace's kernel time per step and rank over the simulator's compute for the config flags' run.",
  "Sizes also come from older profilers' nccl:* ops ('Input Dims', 'Input type'); a group the trace does",
  'not size is taken from the config, or, when it names no group, as the world (said in a note). Each',
  'group that cannot be fitted, and each kind of kernel left out, is given with the reason.',
  '  --json   {"groups":[{group, groupSize, samples, alphaUs, betaBytesPerS, rmsRelErr, maxRelErr, points:[{name,',
  '           kind, bytes, measuredUs, estimatedUs}]}], "unfitted":[{group, groupSize?, kinds, samples, reason}],',
  '           "notes":[...], "scales":[{cls, measuredUs, simulatedUs, scale}], "skipped", "warnings":[...]}',
].join('\n');

const pct = (x: number) => formatPercent(x * 100, 2);

function formatCalibration(c: Calibration): string {
  const head = 'process group  n    collectives  α µs/step  β GB/s (bus)  fit error rms / max';
  const none =
    c.unfitted.length === 0
      ? 'no collectives were found in the trace: no process group to fit α, β to'
      : 'no process group could be fitted (the reasons follow)';
  const lines = [c.groups.length ? head : none];
  for (const g of c.groups)
    lines.push(
      [
        g.group.padEnd(13),
        String(g.groupSize).padEnd(3),
        String(g.samples).padStart(11),
        fixed(g.alphaUs, 3).padStart(9),
        fixed(g.betaBytesPerS / 1e9, 2).padStart(12),
        `${pct(g.rmsRelErr)} / ${pct(g.maxRelErr)}`,
      ].join('  '),
    );
  lines.push('', 'op class     measured µs/step  simulated µs/step  scale');
  for (const s of c.scales)
    lines.push(
      [
        s.cls.padEnd(11),
        (s.absent ? MISSING : fixed(s.measuredUs, 1)).padStart(16),
        fixed(s.simulatedUs, 1).padStart(17),
        s.absent ? '1 (no kernel of the class in the trace: unchanged)' : fixed(s.scale, 3),
      ].join('  '),
    );
  if (c.unfitted.length) lines.push('', 'not fitted:', ...c.unfitted.map((u) => `  ${unfittedText(u)}`));
  if (c.notes.length) lines.push('', 'notes:', ...c.notes.map((n) => `  ${assumptionText(n)}`));
  const g = c.groups[0];
  if (c.groups.length === 1 && g)
    lines.push(
      '',
      `to simulate with the fitted ring: --latency-us ${+fixed(g.alphaUs, 3)} ` +
        `--bandwidth-gbps ${+fixed(g.betaBytesPerS / 1e9, 3)} --network pcie-ethernet ` +
        '(a preset without a half-bandwidth size, so the ring is pure α-β)',
    );
  return lines.join('\n');
}

export async function calibrateCommand(argv: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parseFlags('calibrate', argv, CALIBRATE_OPTIONS, true);
  if (values.help) {
    io.out(CALIBRATE_USAGE);
    return 0;
  }
  if (positionals.length === 0)
    throw new UsageError('fsdp-sim calibrate: give at least one trace FILE (.json or .json.gz, one per rank)');
  const cfg = configFromFlags('calibrate', values);
  stdinOnce('calibrate', positionals);
  // streamed, each event kept as calibration reads it and each file read as it arrives (trace_input.ts)
  const samples = new TraceSampleReader(positionals.length);
  await readTraceFiles(positionals, calibrateKeep, undefined, (json, i) => samples.add(positionals[i], json));
  const t = samples.result();
  if (!t.ok) throw t.error;
  const c = calibrate(t.value, cfg);
  const nanAsNull = (_k: string, v: unknown) => (typeof v === 'number' && Number.isNaN(v) ? null : v);
  if (values.json) io.out(JSON.stringify(wordedCalibration(c), nanAsNull));
  else {
    for (const w of c.warnings) io.err(`warning: ${w}`);
    io.out(formatCalibration(c));
  }
  return 0;
}
