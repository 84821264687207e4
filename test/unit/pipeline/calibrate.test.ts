// Calibration from synthetic Kineto traces made with known α, β and op-class scales (from the
// simulator's own step of the config, with ±0.5 % deterministic noise): the fit recovers them
// within 2 %, whether a kernel carries its sizes or its record_param_comms launch does. On HTA's
// real two-rank sample (sizes only on older profilers' nccl:* ops) the fit uses what those ops
// say, and every kernel it leaves out is given with the reason.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../../src/config';
import { buildGraph, runPipeline } from '../../../src/pipeline';
import {
  calibrate,
  type CollectiveSample,
  fitCollectives,
  modelUs,
  opClassOfOp,
} from '../../../src/pipeline/calibrate';
import { opClassOfKernel, traceSamples } from '../../../src/pipeline/calibrate_kineto';
import { importTrace } from '../../../src/trace';
import { unfittedText } from '../../../src/words';
import { leftOutText } from '../../../src/words/calibrate_words';
import {
  ALPHA_US,
  BETA,
  CFG,
  KERNEL,
  SCALES,
  STEPS,
  bigKinetoRank,
  kinetoFiles as files,
} from '../../helpers/kineto_synth';
import { fixturePath } from '../../helpers/fixtures';

const samplesOf = (f: { name: string; json: unknown }[]) => {
  const t = traceSamples(f);
  if (!t.ok) throw t.error;
  return t.value;
};

describe('calibrate', () => {
  for (const onKernel of [true, false]) {
    const where = onKernel ? 'kernel' : 'launching record_param_comms';
    it(`recovers α, β and the op-class scales within 2 % (sizes on the ${where})`, () => {
      const t = samplesOf(files(onKernel));
      const colls = buildGraph(CFG).nodes.filter((n) => n.collective).length;
      expect(t.collectives).toHaveLength(2 * STEPS * colls);
      expect([t.steps, t.ranks, t.worldSize]).toEqual([STEPS, 2, 4]);
      const c = calibrate(t, CFG);
      expect(c.groups).toHaveLength(1);
      const g = c.groups[0];
      expect([g.group, g.groupSize]).toEqual(['0', 4]);
      expect(Math.abs(g.alphaUs / ALPHA_US - 1)).toBeLessThan(0.02);
      expect(Math.abs(g.betaBytesPerS / BETA - 1)).toBeLessThan(0.02);
      expect(g.maxRelErr).toBeLessThan(0.02); // the model fits every collective within the noise
      for (const s of c.scales) expect(Math.abs(s.scale / SCALES[s.cls] - 1)).toBeLessThan(0.02);
      // the two send/recv kernels are left out, and said so
      expect(c.skipped).toBe(2);
      expect(c.unfitted.map(unfittedText)).toEqual([
        expect.stringMatching(/^group 'default' \(send_recv ×2\): no ring model for it here/),
      ]);
    });
  }

  it('gives flags under which the simulator times every collective as the fitted ring', () => {
    const g = calibrate(samplesOf(files(true)), CFG).groups[0];
    const cfg = {
      ...CFG,
      network: 'pcie-ethernet' as const,
      latencyUs: g.alphaUs,
      bandwidthGBps: g.betaBytesPerS / 1e9,
    };
    const run = runPipeline(cfg, 'aot_eager', { emitRanks: [0] });
    const comm = run.sim.events.filter((e) => e.kind === 'all_gather' || e.kind === 'reduce_scatter');
    expect(comm.length).toBeGreaterThan(0);
    for (const e of comm) {
      const want = modelUs(
        { kind: e.kind as 'all_gather', groupSize: CFG.ranks, bytes: e.bytes! },
        g.alphaUs,
        g.betaBytesPerS,
      );
      expect(e.dur).toBeCloseTo(want, 6);
    }
  });

  it('classifies real kernel names and step-graph ops alike', () => {
    expect(Object.entries(KERNEL).map(([, k]) => opClassOfKernel(k))).toEqual(['matmul', 'attention', 'elementwise']);
    const matmul = [
      'void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x5_tn_align4>(Params)',
      'ampere_sgemm_32x128_tn',
      'sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_kernel__5x_cublas',
      'void gemmk1_kernel<float, 256, 5, false, false, false, false, cublasGemvTensorStridedBatched<float const>>',
      'std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, float, float, float, float>',
      'void epilogue::impl::globalKernel<float, float, float, true, true>(int, int, long, float*, cublasLtEpilogue_t)',
      'nvjet_hsh_128x256_64x4_2x1_v_bz_coopB_NTN',
      'triton_tem_fused_mm_0',
      'triton_mm_42',
      'void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align8>(Params)',
    ];
    const attention = [
      'void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64, 128>>',
      'fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t>::Params)',
      'cudnn_generated_fort_native_sdpa_sm90_knob_7_64x128x128_4x1x1_kernel0_0',
      'void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<CollectiveMainloopFwdSm90>>>',
      'triton_tem_fused_flex_attention_0',
    ];
    const elementwise = [
      'void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>, at::detail::Array<char*, 1> >',
      'void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*)',
      'triton_poi_fused__to_copy_mm_0',
      'triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_1',
      'void cub::DeviceScanKernel<cub::AgentScanPolicy<128, 15, int>>',
    ];
    expect(matmul.filter((k) => opClassOfKernel(k) !== 'matmul')).toEqual([]);
    expect(attention.filter((k) => opClassOfKernel(k) !== 'attention')).toEqual([]);
    expect(elementwise.filter((k) => opClassOfKernel(k) !== 'elementwise')).toEqual([]);
    expect(['matmul', 'attention_bwd', 'rms_norm', 'cast'].map(opClassOfOp)).toEqual([
      'matmul',
      'attention',
      'elementwise',
      'elementwise',
    ]);
  });

  it('says why a group of one size cannot be fitted, and refuses a file that is no trace', () => {
    const one: CollectiveSample[] = [1, 2, 3].map((k) => ({
      rank: 0,
      name: 'ag',
      kind: 'all_gather',
      group: 'dp',
      groupSize: 8,
      bytes: 1 << 20,
      durUs: 30 + k,
    }));
    const f = fitCollectives(one);
    expect(f.groups).toEqual([]);
    expect(f.unfitted.map(unfittedText)).toEqual([
      "group 'dp' (all_gather ×3, n = 8): its 3 collective(s) all move 1.0 MiB: with one size α and β cannot be " +
        'told apart; profile steps with collectives of different sizes',
    ]);
    const bad = traceSamples([{ name: 'x.json', json: { foo: 1 } }]);
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.error.message).toBe('x.json: not a Kineto trace (no traceEvents array)');
  });
});

describe('calibrate on real and hostile traces', () => {
  const hta = [0, 1].map((r) => ({
    name: `sampled_rank-${r}.json.gz`,
    json: JSON.parse(gunzipSync(readFileSync(fixturePath(`hta/sampled_rank-${r}.json.gz`))).toString()) as unknown,
  }));

  it("fits HTA's sample from its nccl:* ops' Input Dims, as the least-squares optimum", () => {
    const cfg = { ...defaultConfig(), model: 'small' as const, ranks: 128 };
    const c = calibrate(samplesOf(hta), cfg);
    expect(c.groups).toHaveLength(1);
    const g = c.groups[0];
    // no group in the trace: the world (distributedInfo.world_size), said in a note
    expect([g.group, g.groupSize, g.samples]).toEqual(['default', 128, 12]);
    expect(c.notes).toEqual([{ group: 'default', n: 128, from: 'world' }]);
    // all_reduce: 'Input Dims' [[n]] of 'Input type' float; _all_gather_base: its input (a shard) × 128
    const sizes = (kind: string) => [...new Set(g.points.filter((p) => p.kind === kind).map((p) => p.bytes))].sort();
    expect(sizes('all_reduce')).toEqual([19618307, 26955536, 26258430, 5716654].map((n) => n * 4).sort());
    expect(sizes('all_gather')).toEqual([16777216 * 128]);
    // the fit is the minimum of Σ ((estimated − measured) / measured)²: moving α or β raises it
    const pts = g.points.map((p) => ({ ...p, kind: p.kind as 'all_reduce', groupSize: 128 }));
    const cost = (a: number, b: number) => pts.reduce((s, p) => s + (modelUs(p, a, b) / p.measuredUs - 1) ** 2, 0);
    const best = cost(g.alphaUs, g.betaBytesPerS);
    for (const [da, db] of [
      [1.01, 1],
      [0.99, 1],
      [1, 1.01],
      [1, 0.99],
    ])
      expect(cost(g.alphaUs * da, g.betaBytesPerS * db)).toBeGreaterThan(best);
    expect(g.alphaUs).toBeGreaterThan(0);
    expect(c.unfitted.map(unfittedText)).toEqual([
      expect.stringMatching(/^group 'default' \(all_to_all ×8\): no ring model for it here/),
    ]);
  });

  it("refuses a config whose ranks differ from the trace's world_size, and two files of one rank", () => {
    expect(() => calibrate(samplesOf(hta), { ...CFG, ranks: 2 })).toThrow(
      "the trace's distributedInfo.world_size is 128 but the config has ranks = 2: calibrate against the run's " +
        'config (--ranks 128)',
    );
    const twice = traceSamples([hta[0], { ...hta[0], name: 'copy.json' }]);
    expect(twice.ok).toBe(false);
    if (!twice.ok) expect(twice.error.message).toMatch(/^copy\.json holds rank 0, which sampled_rank-0\.json\.gz also/);
  });

  it('refuses a string dur or a ts past 2^53 µs naming the field, as the trace importer does', () => {
    for (const [key, bad] of [
      ['dur', '50'],
      ['ts', 2 ** 60],
    ] as const) {
      const [f] = files(true);
      const evs = (f.json as { traceEvents: Record<string, unknown>[] }).traceEvents;
      const i = evs.findIndex((e) => e.cat === 'kernel');
      evs[i][key] = bad;
      const r = traceSamples([f]);
      const analyze = importTrace(f.json);
      expect([r.ok, analyze.ok]).toEqual([false, false]);
      if (r.ok || analyze.ok) continue;
      expect(r.error.message.startsWith(`rank0.pt.trace.json.traceEvents[${i}].${key} must be`)).toBe(true);
      expect(r.error.message).toBe(analyze.error.message.replace(/^trace\b/, f.name));
    }
  });

  it("names a dtype it does not know (a prototype name too), and a collective's missing size", () => {
    const [f] = files(true);
    const evs = (f.json as { traceEvents: { name: string; args?: Record<string, unknown> }[] }).traceEvents;
    const ncc = evs.filter((e) => /AllGather/.test(e.name));
    ncc[0].args!.dtype = 'constructor';
    delete ncc[1].args!['In msg nelems'];
    delete ncc[1].args!['Out msg nelems'];
    const c = calibrate(samplesOf([f]), CFG);
    // the engine keeps each reason as a code and the facts; src/words/ words it
    expect(c.unfitted.map((u) => u.reason)).toEqual(
      expect.arrayContaining([{ code: 'bad_dtype', dtype: 'constructor' }, { code: 'no_size' }]),
    );
    const why = c.unfitted.map(unfittedText);
    const dtype = /^group '0' \(all_gather ×1\): its 'dtype' is "constructor", not one of \[Double, Long, .*BFloat16/;
    expect(why).toContainEqual(expect.stringMatching(dtype));
    expect(why).toContainEqual(
      "group '0' (all_gather ×1): it carries no size: no 'In msg nelems' / 'Out msg nelems' in the kernel's args or " +
        "its record_param_comms, and no nccl:<collective> op with 'Input Dims' around its launch",
    );
    expect(c.groups[0].samples).toBe(ncc.length + evs.filter((e) => /ReduceScatter/.test(e.name)).length - 2);
  });

  it('takes a group size the trace lacks from the config, and says which field is missing otherwise', () => {
    const strip = (drop: string[], noWorld = false) => {
      const [f] = files(true);
      const j = f.json as { traceEvents: { args?: Record<string, unknown> }[]; distributedInfo?: object };
      for (const e of j.traceEvents) for (const k of drop) delete e.args?.[k];
      if (noWorld) delete j.distributedInfo;
      return calibrate(samplesOf([f]), CFG);
    };
    // named '0', no size, the config's groups are 'dp': no fit, the missing field named
    const named = strip(['Group size']);
    expect(named.groups).toEqual([]);
    const missing = "no 'Group size' in its kernel's or record_param_comms' args, and the config has no group '0'";
    const ring = named.unfitted.filter((u) => u.kinds[0].kind !== 'send_recv');
    expect(ring.map((u) => [u.group, u.kinds[0].kind, leftOutText(u.reason)])).toEqual([
      ['0', 'all_gather', missing],
      ['0', 'reduce_scatter', missing],
    ]);
    // renamed 'dp': the config's dp group (4 ranks) sizes it, and a note says so
    const [f] = files(true);
    for (const e of (f.json as { traceEvents: { args?: Record<string, unknown> }[] }).traceEvents)
      if (e.args?.['Group size'] !== undefined) {
        delete e.args['Group size'];
        e.args['Process Group Name'] = 'dp';
      }
    const dp = calibrate(samplesOf([f]), CFG);
    expect(dp.groups.map((g) => [g.group, g.groupSize])).toEqual([['dp', 4]]);
    expect(Math.abs(dp.groups[0].alphaUs / ALPHA_US - 1)).toBeLessThan(0.02);
    expect(dp.notes).toEqual([{ group: 'dp', n: 4, from: 'config' }]);
    // no group and no world size: nothing to take n from
    const none = strip(['Group size', 'Process Group Name'], true);
    expect(none.unfitted.map(unfittedText)).toContainEqual(
      expect.stringMatching(/no 'Group size' or 'Process Group Name' in the trace, and no distributedInfo\.world_size/),
    );
  });

  it('names a malformed count or a group size beyond the world, user strings as group names included', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ 'In msg nelems': '100' }, `its 'In msg nelems' is "100", not a whole number in [0, 2^53)`],
      [
        { 'Group size': -1, 'Process Group Name': '__proto__' },
        "its 'Group size' is -1, not a whole number in [0, 2^53)",
      ],
      [{ 'Group size': 1e308 }, "its 'Group size' is 1e+308, not a whole number in [0, 2^53)"],
      [{ 'Group size': 64 }, "its 'Group size' is 64, more than the trace's world_size (4)"],
      [{ 'Group size': 0 }, "its 'Group size' is 0: a collective runs on one rank at least"],
    ];
    for (const [set, reason] of cases) {
      const [f] = files(true);
      for (const e of (f.json as { traceEvents: { args?: Record<string, unknown> }[] }).traceEvents)
        if (e.args?.['Group size'] !== undefined) Object.assign(e.args, set);
      const c = calibrate(samplesOf([f]), CFG);
      expect(c.groups).toEqual([]);
      const group = (set['Process Group Name'] as string | undefined) ?? '0';
      const ring = c.unfitted.filter((u) => u.kinds[0].kind !== 'send_recv');
      expect(ring.map((u) => [u.group, leftOutText(u.reason)])).toEqual([
        [group, reason],
        [group, reason],
      ]);
    }
  });

  it('joins a kernel to its record_param_comms by the ac2g flow when it has no correlation', () => {
    const [f] = files(false);
    const evs = (f.json as { traceEvents: Record<string, unknown>[] }).traceEvents;
    const corrOf = (e: Record<string, unknown>) => (e.args as { correlation: number }).correlation;
    const launches = new Map(evs.filter((e) => e.cat === 'cuda_runtime').map((e) => [corrOf(e), e]));
    for (const k of evs.filter((e) => /nccl.*(AllGather|ReduceScatter)/.test(String(e.name)))) {
      const args = k.args as Record<string, unknown>;
      const l = launches.get(args.correlation as number)!;
      const id = args.correlation as number;
      evs.push({ ph: 's', cat: 'ac2g', id, pid: l.pid, tid: l.tid, ts: l.ts, name: 'launch' });
      evs.push({ ph: 'f', bp: 'e', cat: 'ac2g', id, pid: k.pid, tid: k.tid, ts: k.ts, name: 'launch' });
      delete args.correlation;
      delete (l.args as Record<string, unknown>).correlation;
    }
    const g = calibrate(samplesOf([f]), CFG).groups[0];
    expect(Math.abs(g.alphaUs / ALPHA_US - 1)).toBeLessThan(0.02);
    expect(Math.abs(g.betaBytesPerS / BETA - 1)).toBeLessThan(0.02);
  });

  it('reads 200k kernels and 160k collectives (record_param_comms each) without overflowing the stack', () => {
    const cfg = { ...defaultConfig(), model: 'small' as const, ranks: 8 };
    const t = samplesOf([{ name: 'big.json', json: bigKinetoRank(200_000, 160_000) }]);
    expect([t.kernels, t.collectives.length]).toEqual([200_000, 160_000]);
    const c = calibrate(t, cfg);
    expect(c.groups[0].samples).toBe(160_000);
    expect(c.groups[0].alphaUs).toBeCloseTo(ALPHA_US, 6);
    expect(c.groups[0].betaBytesPerS / BETA).toBeCloseTo(1, 9);
  });
});
