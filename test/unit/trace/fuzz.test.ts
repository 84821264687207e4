// Fuzz: mangled trace files (ours and Kineto) always end in a trace or an ImportError that names
// where the problem is — never a throw, never a trace with impossible events.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ImportError } from '../../../src/errors';
import { exportChromeTrace } from '../../../src/trace/chrome_export';
import { importTrace } from '../../../src/trace/import';
import { computeMetrics } from '../../../src/trace/metrics';
import { rng } from '../../helpers/rng';
import { syntheticStep } from './helpers';
import { fixturePath } from '../../helpers/fixtures';

const fixture = (name: string) => readFileSync(fixturePath(`kineto/${name}`), 'utf8');

const JUNK: unknown[] = [
  null,
  undefined,
  -1,
  0,
  1e300,
  NaN,
  Infinity,
  '',
  'x',
  '12',
  true,
  [],
  {},
  [1, 2],
  { a: 1 },
  -0.5,
  7.25,
];
const FIELDS = [
  'ph',
  'name',
  'cat',
  'pid',
  'tid',
  'ts',
  'dur',
  'args',
  'bytes',
  'kind',
  'stream',
  'rank',
  'world_size',
  'Device Id',
  'Total Allocated',
  'fsdp_sim',
  'traceEvents',
  'distributedInfo',
];

/** Mutate a random nested value of a JSON tree in place. */
function mangle(root: unknown, r: () => number): void {
  let node = root as Record<string, unknown> | unknown[];
  for (let depth = 0; depth < 6; depth++) {
    const keys = Array.isArray(node) ? node.map((_, i) => i) : Object.keys(node);
    if (keys.length === 0) break;
    const k = keys[Math.floor(r() * keys.length)] as never;
    const child = (node as Record<string, unknown>)[k];
    const stop = child === null || typeof child !== 'object' || r() < 0.25;
    if (stop) {
      const op = r();
      if (op < 0.45) (node as Record<string, unknown>)[k] = JUNK[Math.floor(r() * JUNK.length)];
      else if (op < 0.65 && !Array.isArray(node)) delete (node as Record<string, unknown>)[k];
      else if (op < 0.85 && !Array.isArray(node))
        (node as Record<string, unknown>)[FIELDS[Math.floor(r() * FIELDS.length)]] =
          JUNK[Math.floor(r() * JUNK.length)];
      else if (Array.isArray(node)) node.splice(Math.floor(r() * node.length), 1);
      return;
    }
    node = child as Record<string, unknown>;
  }
}

function checkOutcome(input: unknown) {
  const res = importTrace(input); // must not throw
  if (!res.ok) {
    expect(res.error).toBeInstanceOf(ImportError);
    expect(res.error.where.length).toBeGreaterThan(0);
    expect(res.error.message).toContain(res.error.where);
    return 'error';
  }
  const t = res.value;
  expect(Number.isInteger(t.worldSize) && t.worldSize >= 1).toBe(true);
  for (const e of t.events) {
    expect(Number.isFinite(e.start) && Number.isFinite(e.dur) && e.dur >= 0).toBe(true);
    expect(Number.isInteger(e.rank) && e.rank >= 0 && e.rank < t.worldSize).toBe(true);
  }
  const m = computeMetrics(t.events, t.memory);
  expect(Number.isFinite(m.stepTimeUs) && Number.isFinite(m.exposedCommUs)).toBe(true);
  return 'ok';
}

describe('importTrace fuzz', () => {
  it('ends 400 mangled Kineto / own-export files in a trace or a located ImportError', () => {
    const r = rng(2024);
    const sources = [
      () => JSON.parse(fixture('rank0.pt.trace.json')),
      () => [JSON.parse(fixture('rank0.pt.trace.json')), JSON.parse(fixture('rank1.pt.trace.json'))],
      () => JSON.parse(JSON.stringify(exportChromeTrace(syntheticStep(Math.floor(r() * 1000), 2)))),
    ];
    const tally = { ok: 0, error: 0 };
    for (let i = 0; i < 400; i++) {
      const doc = sources[i % sources.length]();
      const hits = 1 + Math.floor(r() * 4);
      for (let h = 0; h < hits; h++) mangle(doc, r);
      let input: unknown = doc;
      if (r() < 0.1) {
        const text = JSON.stringify(doc) ?? '';
        input = text.slice(0, Math.floor(r() * text.length)); // truncated JSON text
      }
      tally[checkOutcome(input)]++;
    }
    // both outcomes occur: the fuzzer reaches the error paths and the tolerated ones
    expect(tally.ok).toBeGreaterThan(20);
    expect(tally.error).toBeGreaterThan(20);
  });

  it('handles non-trace inputs', () => {
    for (const x of [undefined, null, 42, 'null', '[]', [], [[]], { traceEvents: {} }, { traceEvents: [null] }])
      expect(checkOutcome(x)).toBe('error');
  });
});
