// Node unit tests: pure core (model, graph, estimate, backends, sim, trace), comm on worker_threads, CLI.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts'],
    environment: 'node',
    testTimeout: 60_000,
    pool: 'forks',
  },
});
