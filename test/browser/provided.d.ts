// Values vitest.browser.config.ts provides to each browser instance (read with inject()).
import 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Which WebGPU adapter this instance's Chromium was launched for. */
    webgpuFeatureLevel: 'core' | 'compatibility';
  }
}
