// coi-serviceworker: makes a page cross-origin isolated on static hosts that cannot send headers
// (GitHub Pages, plain file servers). It re-serves every same-origin response with
// Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp, which
// turns on `crossOriginIsolated` (and SharedArrayBuffer for the rank workers) after one reload.
// Registered by src/main.tsx only when the page is not already isolated.

const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

self.addEventListener('install', () => {
  // take over without waiting for old tabs to close: the page reloads itself once
  self.skipWaiting();
});

self.addEventListener('activate', (event) => {
  event.waitUntil(self.clients.claim());
});

function withIsolation(response) {
  // opaque and error responses cannot be rewritten; pass them through
  if (response.status === 0 || response.type === 'opaque' || response.type === 'opaqueredirect') return response;
  const headers = new Headers(response.headers);
  for (const [k, v] of Object.entries(ISOLATION_HEADERS)) headers.set(k, v);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

self.addEventListener('fetch', (event) => {
  const request = event.request;
  // a devtools quirk: only-if-cached requests outside same-origin mode throw when fetched
  if (request.cache === 'only-if-cached' && request.mode !== 'same-origin') return;
  if (new URL(request.url).origin !== self.location.origin) return; // leave other origins alone
  event.respondWith(fetch(request).then(withIsolation));
});
