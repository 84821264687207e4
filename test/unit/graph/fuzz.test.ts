// Seeded fuzz: random step configs (some invalid) and mangled FX dumps each end in a value or
// a FsdpSimError (ImportError for imports, never an 'internal' one) — no other exception.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, FsdpSimError, ImportError } from '../../../src/errors';
import { buildStepGraph, importFxGraph } from '../../../src/graph';
import { isTopologicalOrder } from '../../../src/graph/toposort';
import { verifyGraph } from '../../../src/graph/verify';
import { rng } from '../../helpers/rng';
import { fixturePath } from '../../helpers/fixtures';

const CONFIG_CASES = 600;
const FX_CASES = 600;
const JUNK: unknown[] = [0, -1, 2.5, NaN, Infinity, '7', '', null, true, [], {}, 1e12];

describe('fuzz: buildStepGraph', () => {
  it(`ends ${CONFIG_CASES} random configs in a verified graph or a ConfigError`, () => {
    const r = rng(20261130);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
    const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
    const maybe = <T>(good: () => T, pBad = 0.04, pAbsent = 0.4): unknown => {
      const x = r();
      return x < pBad ? pick(JUNK) : x < pBad + pAbsent ? undefined : good();
    };
    let built = 0;
    let rejected = 0;
    for (let c = 0; c < CONFIG_CASES; c++) {
      let model: unknown;
      const m = r();
      if (m < 0.25) model = pick(['tiny', 'small', 'tiny', 'llama3-9b', 'TINY']);
      else if (m < 0.3) model = pick(JUNK);
      else {
        const nKvHeads = int(1, 3);
        const nHeads = nKvHeads * int(1, 3);
        const args: Record<string, unknown> = {
          dim: nHeads * int(1, 4),
          nLayers: int(1, 3),
          nHeads,
          nKvHeads,
          vocabSize: int(1, 40),
          ffnDim: int(1, 24),
          normEps: 1e-5,
          seqLen: int(1, 8),
          batch: int(1, 3),
        };
        if (r() < 0.2) args[pick(Object.keys(args))] = pick(JUNK);
        if (r() < 0.03) delete args[pick(Object.keys(args))];
        if (r() < 0.02) args.extra = 1;
        model = args;
      }
      const cfg: Record<string, unknown> = {
        model,
        worldSize: r() < 0.05 ? pick(JUNK) : int(1, 12),
        batch: maybe(() => int(1, 3)),
        seqLen: maybe(() => int(1, 8)),
        paramDtype: maybe(() => pick(['bf16', 'fp32', 'fp16', 'i32', 'float8'])),
        reduceDtype: maybe(() => pick(['fp32', 'bf16'])),
        lr: maybe(() => r() * 0.01),
        beta1: maybe(() => r()),
        beta2: maybe(() => r()),
        eps: maybe(() => r() * 1e-6),
        weightDecay: maybe(() => r() * 0.2),
      };
      for (const k of Object.keys(cfg)) if (cfg[k] === undefined && k !== 'model') delete cfg[k];
      if (r() < 0.02) cfg.bogus = 1;
      const input: unknown = r() < 0.01 ? pick([null, 3, 'tiny', []]) : cfg;
      try {
        const g = buildStepGraph(input as never);
        verifyGraph(g);
        expect(
          isTopologicalOrder(
            g,
            g.nodes.map((n) => n.id),
          ),
        ).toBe(true);
        built++;
      } catch (e) {
        if (!(e instanceof ConfigError)) throw new Error(`case ${c}: ${JSON.stringify(input)} threw ${String(e)}`);
        expect(e.message).toContain(e.field.split('.')[0]);
        rejected++;
      }
    }
    expect(built + rejected).toBe(CONFIG_CASES);
    expect(built).toBeGreaterThan(CONFIG_CASES / 5);
    expect(rejected).toBeGreaterThan(CONFIG_CASES / 5);
  });
});

describe('fuzz: importFxGraph', () => {
  const FW = JSON.parse(readFileSync(fixturePath('fx/tiny_4layer_fw.json'), 'utf8'));
  const BW = JSON.parse(readFileSync(fixturePath('fx/tiny_4layer_bw.json'), 'utf8'));
  const FIELDS = ['i', 'name', 'op', 'target', 'args', 'shape', 'dtype', 'multi', 'est_ms'];

  it(`ends ${FX_CASES} mangled dumps in a value or an ImportError, never an exception`, () => {
    const r = rng(42);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
    let okCount = 0;
    let errCount = 0;
    const wheres = new Set<string>();
    for (let c = 0; c < FX_CASES; c++) {
      const joined = r() < 0.15;
      const dumps = (joined ? [FW, BW] : [pick([FW, BW])]).map((d) => JSON.parse(JSON.stringify(d)));
      const d = pick(dumps);
      const nodes = d.nodes as Record<string, unknown>[];
      const names = nodes.map((n) => n.name as string);
      const mutations = 1 + Math.floor(r() * 3);
      for (let k = 0; k < mutations; k++) {
        const n = pick(nodes);
        switch (Math.floor(r() * 11)) {
          case 0:
            delete n[pick(FIELDS)];
            break; // dropped field
          case 1:
            n[pick(FIELDS)] = pick(JUNK);
            break; // wrong type
          case 2:
            d.nodes = nodes.slice(0, Math.floor(r() * nodes.length));
            break; // truncated
          case 3:
            if (Array.isArray(n.args) && n.args.length) (n.args as unknown[])[0] = pick(['ghost', pick(names), 7]);
            break; // bad ref
          case 4:
            if (Array.isArray(n.shape)) (n.shape as unknown[])[0] = pick([-1, 0, 1.5, 3, 1e15, 'x']);
            break; // bad shape
          case 5:
            n.target = pick(nodes).target;
            break; // wrong op for the shapes
          case 6: {
            const a = Math.floor(r() * nodes.length);
            const b = Math.floor(r() * nodes.length);
            [nodes[a], nodes[b]] = [nodes[b], nodes[a]];
            break;
          }
          case 7:
            d[pick(['format', 'graph', 'world_size', 'nodes', 'source'])] = pick(JUNK);
            break;
          case 8:
            d.world_size = pick([1, 2, 4, 16]);
            break;
          case 9:
            n.name = pick(names);
            break; // duplicated name
          default:
            n.multi = pick([[[1]], [], [[2, 2], [3]], 'x']);
            break;
        }
      }
      const input = joined ? dumps : dumps[0];
      let res: ReturnType<typeof importFxGraph> | undefined;
      expect(() => {
        res = importFxGraph(input);
      }, `case ${c}`).not.toThrow();
      if (!res) throw new Error('unreachable');
      if (res.ok) {
        expect(() => verifyGraph(res?.ok ? res.value : (undefined as never))).not.toThrow();
        okCount++;
      } else {
        expect(res.error).toBeInstanceOf(ImportError);
        expect(res.error).toBeInstanceOf(FsdpSimError);
        expect(res.error.where, `case ${c}: ${res.error.message}`).not.toBe('internal');
        wheres.add(res.error.where.replace(/\d+/g, '#'));
        errCount++;
      }
    }
    expect(okCount + errCount).toBe(FX_CASES);
    expect(errCount).toBeGreaterThan(FX_CASES / 2);
    expect(okCount).toBeGreaterThan(10);
    expect(wheres.size).toBeGreaterThan(8); // many different fields were blamed
  });
});
