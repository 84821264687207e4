// What each preset assumes (the explain panel's table): every constant the cost model uses appears
// once, with the value the preset holds and a named source; overrides and custom presets say so.
import { describe, expect, it } from 'vitest';
import {
  HARDWARE_NAMES,
  HARDWARE_PRESETS,
  NETWORK_PRESETS,
  hardwareAssumptions,
  networkAssumptions,
  type HardwarePreset,
  type RingNetwork,
} from '../../../src/estimate';

const number = (s: string) => Number(/[\d.]+/.exec(s)![0]);
const byKey = <T extends { key: string }>(rows: readonly T[]) => new Map(rows.map((r) => [r.key, r]));

describe('hardwareAssumptions', () => {
  it('gives each shipped preset its peaks, capacity and achieved rates, each with a cited source', () => {
    for (const name of HARDWARE_NAMES) {
      const hw = HARDWARE_PRESETS[name];
      const rows = byKey(hardwareAssumptions(hw));
      const a = hw.achieved!;
      expect(number(rows.get('bf16-peak')!.value)).toBeCloseTo(hw.bf16Flops / 1e12, -0.5);
      expect(number(rows.get('gemm')!.value)).toBeCloseTo((a.gemm * hw.bf16Flops) / 1e12, -0.5);
      expect(number(rows.get('attn-fwd')!.value)).toBeCloseTo((a.attentionFwd * hw.bf16Flops) / 1e12, -0.5);
      expect(number(rows.get('attn-bwd')!.value)).toBeCloseTo((a.attentionBwd * hw.bf16Flops) / 1e12, -0.5);
      expect(number(rows.get('memory-bound')!.value)).toBeCloseTo((a.hbm * hw.hbmBytesPerS) / 1e12, 2);
      expect(number(rows.get('hbm')!.value)).toBeCloseTo(hw.hbmBytes / 2 ** 30, 2);
      expect(rows.get('gemm-small')!.value).toContain(String(a.gemmHalfDim));
      const grouped = rows.get('gemm-grouped')!;
      if (a.groupedGemm === undefined) expect(grouped.value).toMatch(/one GEMM and one launch per expert/);
      else expect(number(grouped.value)).toBeCloseTo((a.groupedGemm * hw.bf16Flops) / 1e12, -0.5);
      expect(rows.get('launch')!.value).toBe(`${hw.launchUs} µs`);
      expect(rows.get('attn-eager')!.source).toMatch(/torchtitan .*Attention\.forward/);
      expect(number(rows.get('host-link')!.value)).toBe(hw.hostLinkBytesPerS! / 1e9);
      for (const r of rows.values()) expect(r.source, `${name} ${r.key}`).not.toMatch(/^(custom preset|)$/);
    }
    expect(byKey(hardwareAssumptions(HARDWARE_PRESETS['h100-96gb'])).get('bf16-peak')!.source).toMatch(/500 W/);
    for (const name of ['h100', 'h200'] as const) {
      expect(byKey(hardwareAssumptions(HARDWARE_PRESETS[name])).get('host-link')!.value).toBe('64 GB/s each way');
    }
  });

  it('says a custom preset is custom and a preset without achieved rates is the plain roofline', () => {
    const custom: HardwarePreset = { ...HARDWARE_PRESETS.h100, name: 'h100', achieved: undefined };
    const rows = hardwareAssumptions(custom);
    expect(rows.find((r) => r.key === 'bf16-peak')!.source).toBe('custom preset');
    expect(rows.find((r) => r.key === 'achieved')!.value).toMatch(/roofline/);
    expect(rows.some((r) => r.key === 'gemm')).toBe(false);
    expect(rows.some((r) => r.key === 'attn-eager')).toBe(true); // the roofline pays them too
    const noLink: HardwarePreset = { ...custom, hostLinkBytesPerS: undefined };
    expect(hardwareAssumptions(noLink).find((r) => r.key === 'host-link')).toMatchObject({
      value: '64 GB/s each way',
      source: 'custom preset: PCIe Gen5 x16 assumed',
    });
  });
});

describe('networkAssumptions', () => {
  const ring = NETWORK_PRESETS['nvlink-ib'] as RingNetwork;

  it('gives the deployed network its bus bandwidths and latencies with nccl-tests as the source', () => {
    const rows = byKey(networkAssumptions(ring));
    expect(number(rows.get('intra-bw')!.value)).toBe(ring.betaIntraBytesPerS / 1e9);
    expect(number(rows.get('inter-bw')!.value)).toBe(ring.betaInterBytesPerS / 1e9);
    expect(rows.get('intra-bw')!.value).toContain(`${ring.halfBwIntraBytes! / 1e6} MB`);
    expect(number(rows.get('intra-alpha')!.value)).toBe(ring.alphaIntraUs);
    expect(rows.get('intra-bw')!.source).toMatch(/nccl-tests/);
    expect(rows.get('inter-bw')!.source).toMatch(/400 Gb\/s/);
  });

  it("names the config's override, an uncited preset and torch's estimator as what they are", () => {
    expect(
      networkAssumptions({ ...ring, betaIntraBytesPerS: 1e11 }, true).find((r) => r.key === 'intra-bw')!.source,
    ).toMatch(/override/);
    expect(networkAssumptions(NETWORK_PRESETS['pcie-ethernet']).find((r) => r.key === 'intra-bw')!.source).toBe(
      'illustrative',
    );
    const torch = networkAssumptions(NETWORK_PRESETS['nccl-analytical']);
    expect(torch.map((r) => r.key)).toEqual(['gpus-per-node', 'intra-bw', 'inter-bw']);
    expect(torch[1].source).toMatch(/comm_analysis/);
  });
});
