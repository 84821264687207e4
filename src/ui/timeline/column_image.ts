// The snapped pixel columns of one frame (lane_runs.ts: a row of kind codes per lane) drawn as an
// image: one ImageData of nCols × lanes (one pixel row per lane) put on a small offscreen canvas,
// then one nearest-neighbour drawImage per lane stretched to the lane's height — the same pixels as
// one 1-px-wide fillRect per column, at a cost bounded by the canvas width instead of the events.

import { EMPTY_COLUMN, type ColumnGrid } from './lane_runs';

type Rgba = readonly [number, number, number, number];

/** Parse a canvas-normalised colour ('#rrggbb' or 'rgba(r, g, b, a)'); null when neither. */
export function parseCanvasColor(s: string): Rgba | null {
  const hex = /^#([0-9a-f]{6})$/i.exec(s);
  if (hex) {
    const v = parseInt(hex[1], 16);
    return [(v >> 16) & 255, (v >> 8) & 255, v & 255, 255];
  }
  const fn = /^rgba?\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*(?:,\s*([\d.]+)\s*)?\)$/i.exec(s);
  if (!fn) return null;
  const alpha = fn[4] === undefined ? 1 : Number(fn[4]);
  return [Number(fn[1]), Number(fn[2]), Number(fn[3]), Math.round(255 * alpha)];
}

export class ColumnImage {
  private rowsBuf = new Uint8Array(0);
  private canvas: OffscreenCanvas | null = null;
  private octx: OffscreenCanvasRenderingContext2D | null = null;
  private image: ImageData | null = null;
  private readonly rgbaCache = new Map<string, Rgba>();
  private nCols = 0;
  private lanes = 0;

  /** Start a frame: every lane's row cleared to EMPTY_COLUMN. */
  begin(grid: ColumnGrid, lanes: number): void {
    this.nCols = grid.nCols;
    this.lanes = lanes;
    const n = grid.nCols * lanes;
    if (this.rowsBuf.length < n) this.rowsBuf = new Uint8Array(n);
    else this.rowsBuf.fill(EMPTY_COLUMN, 0, n);
  }

  /** Lane li's row (a view; valid until the next begin). */
  row(li: number): Uint8Array {
    return this.rowsBuf.subarray(li * this.nCols, (li + 1) * this.nCols);
  }

  private rgba(color: string): Rgba {
    let c = this.rgbaCache.get(color);
    if (!c) {
      const octx = this.octx;
      if (octx) octx.fillStyle = color; // normalises any CSS colour to '#rrggbb' / 'rgba(…)'
      c = parseCanvasColor(octx ? String(octx.fillStyle) : color) ?? [0, 0, 0, 255];
      this.rgbaCache.set(color, c);
    }
    return c;
  }

  /**
   * Draw the rows at x = grid.colBase, lane li at y = topPx[li] stretched to laneHPx; colors[code − 1]
   * is a claimed column's colour. Returns the number of single-colour runs drawn, or -1 when no
   * offscreen 2D context is available (the caller then fills the runs as rectangles).
   */
  draw(
    ctx: CanvasRenderingContext2D,
    grid: ColumnGrid,
    topPx: Float64Array,
    laneHPx: number,
    colors: readonly string[],
  ): number {
    const { nCols, lanes } = this;
    if (typeof OffscreenCanvas === 'undefined') return -1;
    if (nCols === 0 || lanes === 0) return 0;
    if (!this.canvas || this.canvas.width !== nCols || this.canvas.height !== lanes) {
      this.canvas = new OffscreenCanvas(nCols, lanes);
      this.octx = this.canvas.getContext('2d');
      this.image = this.octx ? this.octx.createImageData(nCols, lanes) : null;
    }
    const octx = this.octx;
    const image = this.image;
    if (!octx || !image) return -1;
    const table = new Uint8Array(4 * (colors.length + 1)); // code → rgba; code 0 stays transparent
    colors.forEach((col, i) => table.set(this.rgba(col), 4 * (i + 1)));
    const px = image.data;
    const rows = this.rowsBuf;
    const laneRuns = new Uint32Array(lanes);
    let runs = 0;
    for (let li = 0; li < lanes; li++) {
      let prev = EMPTY_COLUMN;
      for (let j = li * nCols, e = j + nCols; j < e; j++) {
        const code = rows[j];
        const o = 4 * j;
        const t = 4 * code;
        px[o] = table[t];
        px[o + 1] = table[t + 1];
        px[o + 2] = table[t + 2];
        px[o + 3] = table[t + 3];
        if (code !== prev && code !== EMPTY_COLUMN) laneRuns[li]++;
        prev = code;
      }
      runs += laneRuns[li];
    }
    if (runs === 0) return 0;
    octx.putImageData(image, 0, 0);
    const smoothing = ctx.imageSmoothingEnabled;
    ctx.imageSmoothingEnabled = false;
    for (let li = 0; li < lanes; li++) {
      if (laneRuns[li] > 0) ctx.drawImage(this.canvas, 0, li, nCols, 1, grid.colBase, topPx[li], nCols, laneHPx);
    }
    ctx.imageSmoothingEnabled = smoothing;
    return runs;
  }
}
