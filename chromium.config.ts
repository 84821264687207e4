// Headless Chromium as the browser tests, the e2e tests and the benchmarks launch it: the binary
// (/usr/bin/chromium, never downloaded) and its flags, common ones plus one set per WebGPU adapter.

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Flags every launch takes: headless, sandbox off, and no background traffic (no network at run time). */
export const CHROMIUM_BASE_FLAGS: readonly string[] = [
  '--headless=new',
  '--no-sandbox',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
];

export type WebGpuAdapter = 'swiftshader' | 'compat';

/** Core WebGPU on SwiftShader, or compatibility mode on ANGLE's OpenGL ES over Vulkan (lavapipe). */
export const WEBGPU_ADAPTER_FLAGS: Readonly<Record<WebGpuAdapter, readonly string[]>> = {
  swiftshader: ['--enable-unsafe-webgpu'],
  compat: ['--use-angle=vulkan', '--use-webgpu-adapter=opengles'],
};

/** The full flag list for one adapter. */
export const chromiumFlags = (adapter: WebGpuAdapter): string[] => [
  ...CHROMIUM_BASE_FLAGS,
  ...WEBGPU_ADAPTER_FLAGS[adapter],
];
