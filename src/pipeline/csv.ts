// CSV text (RFC 4180) for the sweep and diff exports, shared by the CLI and the app's download buttons.

/** A cell: quoted when it holds a comma, quote or newline (quotes doubled); null, undefined and NaN are empty. */
export function csvCell(v: unknown): string {
  const s = v === null || v === undefined ? '' : typeof v === 'number' && Number.isNaN(v) ? '' : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** A header line, then one line per row. */
export function csvOf(head: readonly string[], rows: readonly (readonly unknown[])[]): string {
  return [head, ...rows].map((cells) => cells.map(csvCell).join(',')).join('\n');
}
