// Sorting the short integer lists hot loops make (a node's predecessors, a prefetch's path):
// Array#sort allocates a work array per call, which costs more than the sort on a few items.

/** Sorts `xs` ascending in place and returns it: an insertion sort up to 16 items, Array#sort above. */
export function sortAscending(xs: number[]): number[] {
  if (xs.length > 16) return xs.sort((a, b) => a - b);
  for (let i = 1; i < xs.length; i++) {
    const x = xs[i];
    let j = i;
    for (; j > 0 && xs[j - 1] > x; j--) xs[j] = xs[j - 1];
    xs[j] = x;
  }
  return xs;
}
