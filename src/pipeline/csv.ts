// CSV text (RFC 4180) for the sweep and diff exports, shared by the CLI and the app's download
// buttons: d3-dsv's writer (quotes a cell holding a comma, quote or line break; quotes doubled).

import { csvFormatRows, csvFormatValue } from 'd3-dsv';

/** A cell's text: null, undefined and NaN are empty (a figure that does not exist), the rest String(v). */
const cellText = (v: unknown): string =>
  v === null || v === undefined || (typeof v === 'number' && Number.isNaN(v)) ? '' : String(v);

/** One cell as CSV (quoted when it needs to be). */
export const csvCell = (v: unknown): string => csvFormatValue(cellText(v));

/** A header line, then one line per row. */
export function csvOf(head: readonly string[], rows: readonly (readonly unknown[])[]): string {
  return csvFormatRows([head, ...rows].map((cells) => cells.map(cellText)));
}
