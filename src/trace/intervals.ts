// Interval algebra for trace metrics: unions and intersections of [start, end) sets on one axis (µs).
// Follows Holistic Trace Analysis' definitions (hta/analyzers/breakdown_analysis.py): time is
// counted once however many kernels cover it.

/** A half-open interval [start, end), µs. */
export type Interval = readonly [number, number];

/** union(xs): sorted, disjoint, non-empty intervals covering exactly the points of xs. */
export function union(xs: readonly Interval[]): Interval[] {
  const sorted = xs.filter(([s, e]) => e > s).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const out: [number, number][] = [];
  for (const [s, e] of sorted) {
    const last = out[out.length - 1];
    if (last && s <= last[1]) last[1] = Math.max(last[1], e);
    else out.push([s, e]);
  }
  return out;
}

/** |U|: total length of a union (assumes disjoint input, as union() returns). */
export function totalLength(u: readonly Interval[]): number {
  let sum = 0;
  for (const [s, e] of u) sum += e - s;
  return sum;
}

/** intersect(a, b): the disjoint intervals in both a and b (both must be unions). Two pointers, O(|a|+|b|). */
export function intersect(a: readonly Interval[], b: readonly Interval[]): Interval[] {
  const out: Interval[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const s = Math.max(a[i][0], b[j][0]);
    const e = Math.min(a[i][1], b[j][1]);
    if (e > s) out.push([s, e]);
    if (a[i][1] < b[j][1]) i++;
    else j++;
  }
  return out;
}

/** subtract(a, b): the disjoint intervals in a and not in b (both must be unions). Two pointers, O(|a|+|b|). */
export function subtract(a: readonly Interval[], b: readonly Interval[]): Interval[] {
  const out: Interval[] = [];
  let j = 0;
  for (const [s0, e] of a) {
    let s = s0;
    while (j < b.length && b[j][1] <= s) j++;
    for (let k = j; k < b.length && b[k][0] < e; k++) {
      if (b[k][0] > s) out.push([s, b[k][0]]);
      s = Math.max(s, b[k][1]);
    }
    if (s < e) out.push([s, e]);
  }
  return out;
}
