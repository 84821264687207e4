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

export interface PngTimeline {
  readonly title: string; // 'A · aot_eager · step 846.6 µs · clock: simulated time (cost model)'
  readonly canvas: HTMLCanvasElement;
}

export interface PngOptions {
  readonly background: string;
  readonly text: string;
  readonly muted: string;
  /** Axis ticks shared by every timeline: x in CSS px from the canvas's left edge, and a label. */
  readonly ticks: readonly { readonly xPx: number; readonly label: string }[];
  readonly legend: readonly { readonly label: string; readonly color: string }[];
}

const HEAD_PX = 20; // title line
const AXIS_PX = 16; // tick labels
const LEGEND_PX = 22;

/**
 * PNG of both timeline canvases stacked, each with its title (step time, clock) and time axis, and a
 * legend, via canvas.toBlob.
 */
export async function timelinesPng(timelines: readonly PngTimeline[], o: PngOptions): Promise<Blob> {
  const dpr = window.devicePixelRatio || 1;
  const width = Math.max(...timelines.map((c) => c.canvas.width));
  const height = timelines.reduce((s, c) => s + c.canvas.height + (HEAD_PX + AXIS_PX) * dpr, 0) + LEGEND_PX * dpr;
  const out = document.createElement('canvas');
  out.width = width;
  out.height = height;
  const ctx = out.getContext('2d');
  if (!ctx) throw new Error('PNG export: no 2d canvas context');
  ctx.fillStyle = o.background;
  ctx.fillRect(0, 0, width, height);
  let y = 0;
  for (const c of timelines) {
    ctx.fillStyle = o.text;
    ctx.font = `${12 * dpr}px system-ui, sans-serif`;
    ctx.fillText(c.title, 6 * dpr, y + 14 * dpr);
    y += HEAD_PX * dpr;
    ctx.fillStyle = o.muted;
    ctx.strokeStyle = o.muted;
    ctx.font = `${10 * dpr}px system-ui, sans-serif`;
    ctx.textAlign = 'center';
    for (const t of o.ticks) {
      ctx.fillText(t.label, t.xPx * dpr, y + 10 * dpr);
      ctx.fillRect(t.xPx * dpr, y + 12 * dpr, Math.max(1, dpr), 4 * dpr);
    }
    ctx.textAlign = 'start';
    y += AXIS_PX * dpr;
    ctx.drawImage(c.canvas, 0, y);
    y += c.canvas.height;
  }
  let x = 6 * dpr;
  ctx.font = `${11 * dpr}px system-ui, sans-serif`;
  for (const l of o.legend) {
    ctx.fillStyle = l.color;
    ctx.fillRect(x, y + 6 * dpr, 10 * dpr, 10 * dpr);
    ctx.fillStyle = o.text;
    ctx.fillText(l.label, x + 14 * dpr, y + 15 * dpr);
    x += (20 + ctx.measureText(l.label).width / dpr) * dpr + 8 * dpr;
  }
  return new Promise((resolve, reject) => {
    out.toBlob((b) => (b ? resolve(b) : reject(new Error('PNG export: toBlob returned null'))), 'image/png');
  });
}
