// One requestAnimationFrame scheduler for every canvas: callers mark themselves dirty and all
// redraws run together in the next frame (Perfetto's raf_scheduler). React renders never draw.

type Redraw = () => void;

const dirty = new Set<Redraw>();
let pending = false;

function flush(): void {
  pending = false;
  const jobs = [...dirty];
  dirty.clear();
  for (const job of jobs) job();
}

/** Schedule `redraw` for the next animation frame (coalesced: at most once per frame). */
export function scheduleRedraw(redraw: Redraw): void {
  dirty.add(redraw);
  if (pending) return;
  pending = true;
  if (typeof requestAnimationFrame === 'function') requestAnimationFrame(flush);
  else setTimeout(flush, 16);
}

/** Forget a redraw (component unmounted). */
export function cancelRedraw(redraw: Redraw): void {
  dirty.delete(redraw);
}
