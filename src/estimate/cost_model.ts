// makeCostModel: hardware + network presets → the CostModel backends plan with and the simulator
// times with. Compute is a roofline (or a measured time per node); collectives are an α-β ring or
// torch's analytical NCCL estimate, per the network preset.

import { ConfigError, oneOfMessage } from '../errors';
import type { CollectiveKind, DType, GraphNode } from '../graph';
import { ncclAnalyticalUs, ringNetworkUs } from './collective';
import { computeNodeUs } from './compute';
import { HARDWARE_NAMES, getHardware, type HardwareName, type HardwarePreset } from './hardware';
import { getNetwork, type NetworkName, type NetworkPreset } from './network';
import type { CostModel } from './cost_types';

const DTYPES: readonly DType[] = ['bf16', 'fp32', 'fp16'];

export interface CostModelOptions {
  /** Accelerator preset name or a custom preset. */
  readonly hardware: HardwareName | HardwarePreset;
  /** Network preset name or a custom preset. */
  readonly network: NetworkName | NetworkPreset;
  /** dtype matmuls run in (SimpleFSDP mixed precision: bf16 params). Default 'bf16'. */
  readonly computeDtype?: DType;
  /** Measured compute times by node name, µs (live "measured" mode); roofline for the rest. */
  readonly measuredUs?: Readonly<Record<string, number>>;
  /** Multiplies every compute time (default 1). */
  readonly computeScale?: number;
  /** Multiplies every collective time (default 1); measured mode uses it to keep the preset's compute:comm ratio. */
  readonly commScale?: number;
  /** The step replays as one CUDA graph (graph_trainer's cudagraph_pass): kernels skip the host launch. */
  readonly cudaGraphs?: boolean;
}

function positiveScale(field: string, v: number | undefined): number {
  if (v === undefined) return 1;
  if (!Number.isFinite(v) || v <= 0)
    throw new ConfigError(field, `${field} must be a finite number > 0, got ${JSON.stringify(v)}`);
  return v;
}

function resolveHardware(h: CostModelOptions['hardware']): HardwarePreset {
  if (typeof h === 'string') return getHardware(h);
  if (h === null || typeof h !== 'object')
    throw new ConfigError('hardware', oneOfMessage('hardware', [...HARDWARE_NAMES, '<HardwarePreset>'], h));
  return h;
}

function resolveNetwork(n: CostModelOptions['network']): NetworkPreset {
  if (typeof n === 'string') return getNetwork(n);
  if (n === null || typeof n !== 'object' || (n.kind !== 'ring' && n.kind !== 'nccl-analytical'))
    throw new ConfigError(
      'network',
      oneOfMessage('network', ['nvlink-ib', 'nccl-analytical', 'pcie-ethernet', '<NetworkPreset>'], n),
    );
  return n;
}

export function makeCostModel(opts: CostModelOptions): CostModel {
  const hw = resolveHardware(opts.hardware);
  const net = resolveNetwork(opts.network);
  const dtype = opts.computeDtype ?? 'bf16';
  if (!DTYPES.includes(dtype)) throw new ConfigError('computeDtype', oneOfMessage('computeDtype', DTYPES, dtype));
  const computeScale = positiveScale('computeScale', opts.computeScale);
  const commScale = positiveScale('commScale', opts.commScale);
  const measured = opts.measuredUs ?? {};
  for (const [name, v] of Object.entries(measured)) {
    if (!Number.isFinite(v) || v < 0) {
      const message = `measuredUs['${name}'] must be a finite number ≥ 0 µs, got ${JSON.stringify(v)}`;
      throw new ConfigError('measuredUs', message);
    }
  }

  type CollectiveUs = (kind: CollectiveKind, bytes: number, n: number, stride: number) => number;
  const collectiveRaw: CollectiveUs =
    net.kind === 'ring'
      ? (kind, bytes, n, stride) => ringNetworkUs(net, bytes, n, kind, stride)
      : (kind, bytes, n, stride) => ncclAnalyticalUs(kind, bytes, n, hw.torchGpuType, net, stride);

  const scaleNote = [computeScale !== 1 ? `compute×${computeScale}` : '', commScale !== 1 ? `comm×${commScale}` : '']
    .filter(Boolean)
    .join(' ');
  const cudaGraphs = opts.cudaGraphs === true;
  const computeKind = Object.keys(measured).length > 0 ? 'measured' : hw.achieved ? 'achieved' : 'roofline';
  const networkKind = net.kind === 'ring' ? ' ring' : ` (torch gpu type ${hw.torchGpuType})`;
  const graphs = cudaGraphs ? ' CUDA graphs' : '';
  const scale = scaleNote ? ` (${scaleNote})` : '';
  const label = `${hw.name} ${computeKind} ${dtype}${graphs} + ${net.name}${networkKind}${scale}`;

  return {
    label,
    overlapSlowdown: hw.achieved?.overlapSlowdown ?? 0,
    computeUs(node: GraphNode): number {
      if (node.kind !== 'compute' && node.kind !== 'cast') return computeNodeUs(hw, node, dtype);
      const m = Object.hasOwn(measured, node.name) ? measured[node.name] : undefined;
      return (m ?? computeNodeUs(hw, node, dtype, cudaGraphs)) * computeScale;
    },
    collectiveUs(kind: CollectiveKind, bytes: number, groupSize: number, _dtype: DType, groupStride = 1): number {
      return collectiveRaw(kind, bytes, groupSize, groupStride) * commScale;
    },
  };
}
