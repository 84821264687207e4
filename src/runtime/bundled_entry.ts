// A worker_threads entry written in TypeScript, bundled once per process into one plain ES module,
// so each rank worker loads a single file instead of routing every module through tsx's loader
// hooks (a hooks thread per worker, a round trip per module: about a second per rank on two cores).
// Node-only; the page's workers are bundled by Vite instead.

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { lruMemo } from '../util';

/** The repository's own cache folder: bare imports ('webgpu', 'd3-format') resolve from there. */
const CACHE_DIR = fileURLToPath(new URL('../../node_modules/.cache/fsdp-sim/', import.meta.url));

/** Each module keeps its own import.meta.url (shaders.ts reads the WGSL files next to itself). */
const keepModuleUrls: Plugin = {
  name: 'keep-module-urls',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, (args) => ({
      contents: readFileSync(args.path, 'utf8').replaceAll(
        'import.meta.url',
        JSON.stringify(pathToFileURL(args.path).href),
      ),
      loader: 'ts',
    }));
  },
};

async function bundle(entry: URL): Promise<URL> {
  const built = await build({
    entryPoints: [fileURLToPath(entry)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    write: false,
    logLevel: 'silent',
    plugins: [keepModuleUrls],
  });
  const out = built.outputFiles[0].contents;
  // named by content: concurrent processes write the same file, and a stale one is never reused
  const name = `${createHash('sha256').update(out).digest('hex').slice(0, 16)}.mjs`;
  const file = join(CACHE_DIR, name);
  if (!existsSync(file)) {
    mkdirSync(CACHE_DIR, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, out);
    renameSync(tmp, file);
  }
  return pathToFileURL(file);
}

/** A URL `new Worker()` can load without tsx for the TypeScript worker at `entry`. */
export const bundledEntryUrl: (entry: URL) => Promise<URL> = lruMemo(4, (entry: URL) => entry.href, bundle);
