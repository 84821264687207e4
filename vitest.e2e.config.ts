// End-to-end UI tests: the built app (npm run test:e2e builds first) served by `vite preview`
// and by a plain static server, driven in headless Chromium through playwright-core. Node env.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/e2e/**/*.test.ts'],
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    fileParallelism: false, // one browser at a time on a 2-core machine
  },
});
