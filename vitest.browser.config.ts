// Browser tests (test/browser/**): headless Chromium through Playwright (/usr/bin/chromium, never
// downloaded), two instances with different WebGPU adapters:
//   swiftshader-core  --enable-unsafe-webgpu                         → core SwiftShader (fallback)
//   lavapipe-compat   --use-angle=vulkan --use-webgpu-adapter=opengles → compatibility mode
// Tests read the adapter kind with inject('webgpuFeatureLevel'). The page is cross-origin isolated
// (COOP/COEP) so SharedArrayBuffer exists. Recipe measured in /work/shared/TESTING.md.
import { playwright } from '@vitest/browser-playwright';
import { defineConfig } from 'vitest/config';
import { ISOLATION_HEADERS } from './vite.config.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const BASE_FLAGS = [
  '--headless=new',
  '--no-sandbox',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
];

const chromium = (gpuFlags: string[]) =>
  playwright({ launchOptions: { executablePath: CHROMIUM, args: [...BASE_FLAGS, ...gpuFlags] } });

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
          provider: chromium(['--enable-unsafe-webgpu']),
          provide: { webgpuFeatureLevel: 'core' },
        },
        {
          browser: 'chromium',
          name: 'lavapipe-compat',
          provider: chromium(['--use-angle=vulkan', '--use-webgpu-adapter=opengles']),
          provide: { webgpuFeatureLevel: 'compatibility' },
        },
      ],
    },
  },
});
