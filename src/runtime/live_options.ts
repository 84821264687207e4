// The live run's option vocabulary: the choices and ranges planTraining checks. The config's
// live.* knobs and the `train` command read them through runtime/index_options.ts, so a choice
// or a bound is declared here once (docs/ARCHITECTURE.md §4).

/** Which kernels a rank runs, in the config's words (live.kernels): WGSL on WebGPU, the CPU reference, or either. */
export type KernelChoice = 'webgpu' | 'cpu' | 'auto';
export const KERNEL_CHOICES: readonly KernelChoice[] = ['webgpu', 'cpu', 'auto'];
/** Old spellings a user may still type (`fsdp-sim train --kernels gpu`): the runtime once said 'gpu'. */
export const RENAMED_KERNEL_CHOICES: ReadonlyMap<string, KernelChoice> = new Map([['gpu', 'webgpu']]);

/** The model presets a live run trains: the dense tiny and its mixture-of-experts twin. */
export type LiveModel = 'tiny' | 'moe-tiny';
export const LIVE_MODELS: readonly LiveModel[] = ['tiny', 'moe-tiny'];

/** The virtual clock of a live run: the hardware preset's times, or the machine's measured ones. */
export type TimingMode = 'preset' | 'measured';
export const TIMING_MODES: readonly TimingMode[] = ['preset', 'measured'];

/** Live runs take any world size up to 16: uneven dim-0 shards are zero-padded, as FSDP pads them. */
export const MAX_LIVE_RANKS = 16;
/** Most steps one live run takes; only the losses are kept per step, so a long run stays small. */
export const MAX_LIVE_STEPS = 1_000_000;
/** Largest learning rate a live run takes (lr in (0, MAX_LIVE_LR]). */
export const MAX_LIVE_LR = 1;
/** Most rows of one step across all ranks. */
export const MAX_GLOBAL_BATCH = 4096;
/** Seeds are uint32: the PRNGs read `seed >>> 0` (init.ts splitmix32, estimate's jitter hash). */
export const MAX_SEED = 0xffffffff;
