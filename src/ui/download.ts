// Browser downloads: a Blob saved under a file name through a temporary <a download>.

export function downloadBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  a.rel = 'noopener';
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function downloadJson(value: unknown, fileName: string): void {
  downloadBlob(new Blob([JSON.stringify(value)], { type: 'application/json' }), fileName);
}

/** PNG of both timeline canvases stacked (with a header line each), via canvas.toBlob. */
export async function timelinesPng(canvases: readonly { title: string; canvas: HTMLCanvasElement }[], background: string, text: string): Promise<Blob> {
  const headPx = 22;
  const dpr = window.devicePixelRatio || 1;
  const width = Math.max(...canvases.map((c) => c.canvas.width));
  const height = canvases.reduce((s, c) => s + c.canvas.height + headPx * dpr, 0);
  const out = document.createElement('canvas');
  out.width = width;
  out.height = height;
  const ctx = out.getContext('2d');
  if (!ctx) throw new Error('PNG export: no 2d canvas context');
  ctx.fillStyle = background;
  ctx.fillRect(0, 0, width, height);
  let y = 0;
  for (const c of canvases) {
    ctx.fillStyle = text;
    ctx.font = `${12 * dpr}px system-ui, sans-serif`;
    ctx.fillText(c.title, 6 * dpr, y + 15 * dpr);
    y += headPx * dpr;
    ctx.drawImage(c.canvas, 0, y);
    y += c.canvas.height;
  }
  return new Promise((resolve, reject) => out.toBlob((b) => (b ? resolve(b) : reject(new Error('PNG export: toBlob returned null'))), 'image/png'));
}
