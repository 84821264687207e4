// The WGSL sources, one per kernel family (shaders/*.wgsl), as strings. Under Vite and Vitest
// they come from Vite's `?raw` (an eager import.meta.glob, so no dynamic import() runs in the
// page or a worker); under plain Node (tsx, worker_threads), where `?raw` means nothing, they
// are read from disk next to this file. Entry points and binding numbers are documented in each
// file's header; the host side is ./ops.ts.
import { GpuError } from './gpu_errors';
import { SHADER_NAMES, type ShaderName } from './shader_registry';

const VITE_SOURCES: Record<string, string> | null = import.meta.env
  ? import.meta.glob<string>('../../../shaders/*.wgsl', { query: '?raw', import: 'default', eager: true })
  : null;

const SHADER_DIR = '../../../shaders/';

export async function loadShaderSources(): Promise<Record<ShaderName, string>> {
  const out = {} as Record<ShaderName, string>;
  if (VITE_SOURCES) {
    for (const name of SHADER_NAMES) {
      const src = VITE_SOURCES[`${SHADER_DIR}${name}.wgsl`];
      if (typeof src !== 'string') throw new GpuError(`shaders/${name}.wgsl is missing from the bundle`);
      out[name] = src;
    }
    return out;
  }
  const fsName = 'node:fs/promises'; // a variable keeps it out of browser bundles
  const { readFile } = (await import(/* @vite-ignore */ fsName)) as { readFile(u: URL, enc: 'utf8'): Promise<string> };
  await Promise.all(
    SHADER_NAMES.map(async (name) => {
      out[name] = await readFile(new URL(`${SHADER_DIR}${name}.wgsl`, import.meta.url), 'utf8');
    }),
  );
  return out;
}
