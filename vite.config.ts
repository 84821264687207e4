// Vite config: React, WGSL imported as strings (?raw), and cross-origin isolation headers
// (COOP/COEP) in dev and preview so SharedArrayBuffer exists for the rank workers.
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

export const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
} as const;

export default defineConfig({
  base: './',
  plugins: [react()],
  server: { host: '127.0.0.1', headers: ISOLATION_HEADERS },
  preview: { host: '127.0.0.1', headers: ISOLATION_HEADERS },
  worker: { format: 'es' },
  build: { target: 'es2022', sourcemap: true },
});
