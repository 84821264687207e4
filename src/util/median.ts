// Medians, named by which one they are: torch.median's lower middle value (what cross-rank
// alignment takes, as torch does), and the midpoint of the two middle values (numpy's median).

/** torch.median: the lower of the two middle values for an even count. Sorts `xs` in place. */
export function lowerMedianInPlace(xs: Float64Array): number {
  xs.sort(); // a typed-array sort is numeric
  return xs[(xs.length - 1) >> 1];
}

/** torch.median of `values` (left unchanged). */
export function lowerMedian(values: readonly number[] | Float64Array): number {
  return lowerMedianInPlace(Float64Array.from(values));
}

/** numpy.median: the mean of the two middle values for an even count. */
export function midpointMedian(values: readonly number[]): number {
  const s = Float64Array.from(values).sort();
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}
