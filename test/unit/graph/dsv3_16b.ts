// DeepSeek-V3 16B's dims, written out from torchtitan's 16B config (models/deepseek_v3/__init__.py,
// b5bcd76), for the tests that count one MoE block's ops by hand (moe_graph, moe_selective_ac,
// moe_tp), on one sequence of 512 tokens per rank.
import type { StepGraph } from '../../../src/graph';

export const B = 1;
export const S = 512;
export const T = B * S;
export const D = 2048;
export const H = 16;
export const K = 6; // top-k
export const F = 1408; // routed expert hidden
export const FS = 2 * 1408; // shared experts' hidden (2 shared experts)
export const E = 64;
export const BF16 = 2;

/** FLOPs of an [m, k]·[k, n] matmul. */
export const mm = (m: number, n: number, k: number) => 2 * m * n * k;
/** The nodes of layer 1 (the first MoE block) in `phase`. */
export const layerNodes = (g: StepGraph, phase: string) => g.nodes.filter((n) => n.layer === 1 && n.phase === phase);
