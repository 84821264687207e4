// Per-colour rectangle batches for one canvas frame: rectangles are appended to a slot per colour
// (reusable typed buffers, no allocation per frame once warm) and filled with one fillStyle per
// colour. Callers merge runs before pushing, so the batch only stores what reaches the canvas.

const FIELDS = 4; // x, y, w, h

export class RectBatch {
  private bufs: Float64Array[];
  private lens: Uint32Array;

  constructor(readonly slots: number) {
    this.bufs = Array.from({ length: slots }, () => new Float64Array(FIELDS * 256));
    this.lens = new Uint32Array(slots);
  }

  /** Empty every slot (buffers are kept). */
  reset(): void {
    this.lens.fill(0);
  }

  push(slot: number, xPx: number, yPx: number, wPx: number, hPx: number): void {
    let b = this.bufs[slot];
    const n = this.lens[slot];
    if (n + FIELDS > b.length) {
      const grown = new Float64Array(b.length * 2);
      grown.set(b);
      this.bufs[slot] = b = grown;
    }
    b[n] = xPx;
    b[n + 1] = yPx;
    b[n + 2] = wPx;
    b[n + 3] = hPx;
    this.lens[slot] = n + FIELDS;
  }

  /** Rectangles held in `slot`. */
  count(slot: number): number {
    return this.lens[slot] / FIELDS;
  }

  /** Rectangles held over all slots. */
  total(): number {
    let s = 0;
    for (let i = 0; i < this.slots; i++) s += this.lens[i];
    return s / FIELDS;
  }

  /** Fill each non-empty slot in slot order with its colour: one fillStyle and one path per colour. */
  fill(ctx: CanvasRenderingContext2D, colors: readonly string[]): void {
    for (let slot = 0; slot < this.slots; slot++) {
      const n = this.lens[slot];
      if (n === 0) continue;
      const b = this.bufs[slot];
      ctx.fillStyle = colors[slot];
      for (let k = 0; k < n; k += FIELDS) ctx.fillRect(b[k], b[k + 1], b[k + 2], b[k + 3]);
    }
  }
}
