// Shared by the kernel tests (browser) and ad-hoc Dawn runs (Node): seeded random op cases,
// running one case on any KernelBackend, and llm.c-style result checking
// (tolerance abs + |ref|·eps, first mismatches printed, stop after 10).
import type { ComputeOp } from '../../src/graph/ops';
import { expectedLengths } from '../../src/runtime/cpu/attrs';
import type { HostArray, KernelBackend, OpAttrs } from '../../src/runtime/kernels';
export { randF32, rng } from '../helpers/rng';

export const randI32 = (n: number, r: () => number, hi: number) =>
  Int32Array.from({ length: n }, () => Math.floor(r() * hi));

export interface OpCase {
  readonly name: string;
  readonly op: ComputeOp;
  readonly attrs: OpAttrs;
  readonly inputs: readonly HostArray[];
  readonly step?: number;
  /** Per-output tolerance [abs, eps]; default [1e-5, 1e-4]. */
  readonly tol?: readonly (readonly [number, number])[];
}

/** Runs a case on a backend (fresh tensors, outputs zeroed) and returns its outputs on the host. */
export async function runCase(k: KernelBackend, c: OpCase): Promise<HostArray[]> {
  const lens = expectedLengths(c.op, c.attrs);
  const ins = c.inputs.map((data, i) => {
    const t = k.create(`${c.name}.in${i}`, data.length, data instanceof Int32Array ? 'i32' : 'f32');
    k.upload(t, data);
    return t;
  });
  const outs = lens.outputs.map((n, i) => k.create(`${c.name}.out${i}`, n, 'f32'));
  k.run(c.op, c.attrs, ins, outs, c.step);
  await k.sync();
  const res = await Promise.all(
    outs.map(async (t) => {
      const a = new Float32Array(t.length);
      await k.download(t, a);
      return a;
    }),
  );
  for (const t of [...ins, ...outs]) k.release(t);
  return res;
}

/**
 * Mismatches of `got` against `ref` (abs + |ref|·eps), as lines naming the buffer, index,
 * reference and result; at most 10, then a count. Empty when everything matches.
 */
export function mismatches(
  buffer: string,
  ref: ArrayLike<number>,
  got: ArrayLike<number>,
  abs: number,
  eps: number,
): string[] {
  const out: string[] = [];
  let bad = 0;
  if (ref.length !== got.length) return [`${buffer}: length ${got.length}, reference ${ref.length}`];
  for (let i = 0; i < ref.length; i++) {
    const ok = Math.abs(got[i] - ref[i]) <= abs + Math.abs(ref[i]) * eps; // NaN fails
    if (!ok) {
      bad++;
      if (out.length < 10) out.push(`${buffer}[${i}]: reference ${ref[i]}, result ${got[i]}`);
    }
  }
  if (bad > out.length) out.push(`${buffer}: ${bad} mismatches in ${ref.length} elements (first ${out.length} shown)`);
  return out;
}

/** Runs the case on both backends and returns all mismatch lines (empty = pass). */
export async function compareCase(ref: KernelBackend, dut: KernelBackend, c: OpCase): Promise<string[]> {
  const [want, got] = [await runCase(ref, c), await runCase(dut, c)];
  return want.flatMap((w, i) => {
    const [abs, eps] = c.tol?.[i] ?? [1e-5, 1e-4];
    return mismatches(`${c.name} out${i}`, w, got[i], abs, eps);
  });
}
