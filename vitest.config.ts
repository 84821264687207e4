// Node unit tests: pure core (model, graph, estimate, backends, sim, trace), comm on worker_threads, CLI.
// Files share one module cache (isolate: false): on 2 cores re-importing the core for each of ~140
// files cost more than the tests. A file that mocks a module (vi.mock) needs a fresh cache, so it
// runs in the isolated project; a test that leaves global state behind restores it (afterEach).
import { defineConfig } from 'vitest/config';

const MOCKING = ['test/unit/store/live_run.test.ts', 'test/unit/config/knob_one_declaration.test.ts'];

export default defineConfig({
  test: {
    environment: 'node',
    testTimeout: 60_000,
    pool: 'forks',
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'], exclude: MOCKING, isolate: false } },
      { extends: true, test: { name: 'unit-mocking', include: MOCKING } },
    ],
  },
});
