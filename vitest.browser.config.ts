// Browser tests (test/browser/**): headless Chromium through Playwright (/usr/bin/chromium, never
// downloaded), two instances with different WebGPU adapters:
//   swiftshader-core  --enable-unsafe-webgpu                         → core SwiftShader (fallback)
//   lavapipe-compat   --use-angle=vulkan --use-webgpu-adapter=opengles → compatibility mode
// Tests read the adapter kind with inject('webgpuFeatureLevel'). The page is cross-origin isolated
// (COOP/COEP) so SharedArrayBuffer exists. Recipe measured in /work/shared/TESTING.md.
import { playwright } from '@vitest/browser-playwright';
import { defineConfig } from 'vitest/config';
import { CHROMIUM_PATH, chromiumFlags, type WebGpuAdapter } from './chromium.config.ts';
import { ISOLATION_HEADERS } from './vite.config.ts';

const chromium = (adapter: WebGpuAdapter) =>
  playwright({ launchOptions: { executablePath: CHROMIUM_PATH, args: chromiumFlags(adapter) } });

export default defineConfig({
  server: { headers: ISOLATION_HEADERS },
  test: {
    include: ['test/browser/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    browser: {
      enabled: true,
      headless: true,
      screenshotFailures: false,
      instances: [
        {
          browser: 'chromium',
          name: 'swiftshader-core',
          provider: chromium('swiftshader'),
          provide: { webgpuFeatureLevel: 'core' },
        },
        {
          browser: 'chromium',
          name: 'lavapipe-compat',
          provider: chromium('compat'),
          provide: { webgpuFeatureLevel: 'compatibility' },
        },
      ],
    },
  },
});
