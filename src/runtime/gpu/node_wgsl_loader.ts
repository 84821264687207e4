// Lets plain Node (node --import tsx, tsx's tsImport in worker_threads) import `*.wgsl?raw` the
// way Vite does: a module.register() hook that turns a .wgsl file into `export default "<text>"`.
// A no-op outside Node and when already registered in this thread.

const HOOKS = `
const WGSL = /\\.wgsl(\\?raw)?$/;
export async function resolve(specifier, context, next) {
  if (WGSL.test(specifier) && context.parentURL) {
    return { url: new URL(specifier, context.parentURL).href, format: 'module', shortCircuit: true };
  }
  return next(specifier, context);
}
export async function load(url, context, next) {
  if (WGSL.test(url)) {
    const { readFile } = await import('node:fs/promises');
    const file = new URL(url);
    file.search = '';
    const text = await readFile(file, 'utf8');
    return { format: 'module', source: 'export default ' + JSON.stringify(text) + ';', shortCircuit: true };
  }
  return next(url, context);
}
`;

const FLAG = Symbol.for('fsdp-sim.wgsl-loader');

/** True in Node (main thread or worker_threads), false in browsers and browser workers. */
export function isNode(): boolean {
  const p = (globalThis as { process?: { versions?: { node?: string } } }).process;
  return typeof p?.versions?.node === 'string' && typeof (globalThis as { document?: unknown }).document === 'undefined'
    && typeof (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope === 'undefined';
}

/** Vite/Vitest transform `?raw` themselves; only Node's own loader needs the hook. */
function viteHandlesRaw(): boolean {
  return typeof (import.meta as { env?: unknown }).env === 'object';
}

export async function registerWgslLoader(): Promise<void> {
  const g = globalThis as Record<symbol, unknown>;
  if (!isNode() || viteHandlesRaw() || g[FLAG]) return;
  g[FLAG] = true;
  const specifier = 'node:module'; // kept out of the browser bundle
  const mod = (await import(/* @vite-ignore */ specifier)) as { register(url: string): void };
  mod.register(`data:text/javascript,${encodeURIComponent(HOOKS)}`);
}
