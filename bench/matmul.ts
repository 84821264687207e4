// Bench 1: WGSL matmul vs TensorFlow.js's WebGPU matmul in headless Chromium, per adapter
// (SwiftShader core, lavapipe compatibility). The page (bench/pages/matmul.ts) does the checking
// and timing; this side picks sizes and repetitions to fit the time budget and makes the rows.
// Target: our best variant ≥ 1.2× TF.js GFLOP/s at 1024³ and above.

import os from 'node:os';
import { readFileSync } from 'node:fs';
import { openPage, type Adapter } from './browser';
import { fmt, type Row } from './stats';
import type { MatmulPageOptions, MatmulPageResult } from './pages/matmul';

export const MATMUL_TARGET_RATIO = 1.2;

/**
 * Sizes and repetitions: these CPU adapters run 1–5 GFLOP/s on a shared 2-core box, so 2048³
 * (17 GFLOP per matmul, ×4 with check and warm-up, ×2 sides) only with `full`.
 */
export function matmulPlan(_adapter: Adapter, full: boolean): MatmulPageOptions {
  return {
    sizes: full ? [256, 512, 1024, 2048] : [256, 512, 1024],
    reps: { 256: 5, 512: 3, 1024: 3, 2048: 2 },
    perRep: { 256: 2, 512: 1, 1024: 1, 2048: 1 },
    simpleMaxSize: 512,
    warmupMaxSize: 512,
  };
}

/**
 * Theoretical f32 FMA peak of this CPU (SwiftShader and lavapipe run on it): cores × SIMD lanes ×
 * 2 FMA ports × 2 flops × MHz. A rough ceiling (assumes 2 FMA units per core), named as such.
 */
export function cpuPeakGflops(): number | null {
  try {
    const info = readFileSync('/proc/cpuinfo', 'utf8');
    const flags = /^flags\s*:(.*)$/m.exec(info)?.[1] ?? '';
    const lanes = / avx512f/.test(flags) ? 16 : / avx2/.test(flags) && / fma/.test(flags) ? 8 : 4;
    const mhz = os.cpus()[0]?.speed || Number(/^cpu MHz\s*:\s*([\d.]+)/m.exec(info)?.[1] ?? 0);
    if (!mhz) return null;
    return (os.cpus().length * lanes * 2 * 2 * mhz) / 1000;
  } catch {
    return null;
  }
}

export interface MatmulBench {
  readonly rows: Row[];
  readonly results: Partial<Record<Adapter, MatmulPageResult>>;
}

export async function benchMatmul(url: string, adapters: readonly Adapter[], full: boolean): Promise<MatmulBench> {
  const rows: Row[] = [];
  const results: Partial<Record<Adapter, MatmulPageResult>> = {};
  const peak = cpuPeakGflops();
  for (const adapter of adapters) {
    const { browser, page } = await openPage(adapter, `${url}/bench/pages/matmul.html`);
    try {
      const opts = matmulPlan(adapter, full);
      const res = (await page.evaluate(
        (o) => (window as unknown as { __bench: { matmul(o: unknown): Promise<unknown> } }).__bench.matmul(o),
        opts,
      )) as MatmulPageResult;
      results[adapter] = res;
      for (const n of opts.sizes) {
        const cs = res.cases.filter((c) => c.size === n);
        const tfjs = cs.find((c) => c.impl === 'tfjs');
        const ours = cs.filter((c) => c.impl !== 'tfjs');
        const bad = cs.filter((c) => !c.ok).map((c) => c.impl);
        const best = ours.filter((c) => c.ok).sort((x, y) => y.gflops - x.gflops)[0];
        for (const c of ours) {
          rows.push({
            section: 'matmul',
            case: `${adapter} ${n}³ ${c.impl}`,
            value: c.ok
              ? `${fmt(c.gflops, 2)} GFLOP/s (${fmt(c.msPerMatmul, 1)} ms${c.gpuMs !== null ? `, gpu ${fmt(c.gpuMs, 1)} ms` : ''})`
              : `WRONG (max err ${c.maxErr})`,
            baseline: tfjs?.ok ? `tfjs ${fmt(tfjs.gflops, 2)} GFLOP/s` : 'tfjs failed check',
            ratio: tfjs?.ok && c.ok ? `${fmt(c.gflops / tfjs.gflops, 2)}× tfjs` : '',
            target: '',
            met: null,
          });
        }
        const ratio = best && tfjs?.ok ? best.gflops / tfjs.gflops : NaN;
        const gated = n >= 1024;
        rows.push({
          section: 'matmul',
          case: `${adapter} ${n}³ BEST = ${best?.impl ?? 'none'}${bad.length ? ` (failed check: ${bad.join(', ')})` : ''}`,
          value: best
            ? `${fmt(best.gflops, 2)} GFLOP/s${peak ? `, ${fmt((100 * best.gflops) / peak, 1)}% of CPU FMA peak est. ${fmt(peak, 0)}` : ''}`
            : 'none',
          baseline: tfjs?.ok
            ? `tfjs ${fmt(tfjs.gflops, 2)} GFLOP/s (${fmt(tfjs.msPerMatmul, 1)} ms)`
            : 'tfjs failed check',
          ratio: `${fmt(ratio, 2)}× tfjs`,
          target: gated ? `≥ ${MATMUL_TARGET_RATIO}× tfjs` : '',
          met: gated ? ratio >= MATMUL_TARGET_RATIO && bad.length === 0 : null,
        });
      }
    } finally {
      await browser.close();
    }
  }
  return { rows, results };
}
