// What the docs tests read from the repository's markdown: the ```sh blocks' command lines, the
// tables and the HTML comment that names where a table's (or an output block's) figures come from.
// Reads only files inside the repository; runs a command the way a reader's shell would.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { REPO_ROOT as ROOT } from '../../helpers/fixtures';

export { ROOT };

/** README.md and every docs/*.md, as paths relative to the repository root. */
export function docFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort();
  return ['README.md', ...docs.map((f) => `docs/${f}`)];
}

export function readDoc(file: string): string {
  return readFileSync(join(ROOT, file), 'utf8');
}

/** A fenced block: its info string (`sh`, `text`, ...), its lines, and the line the fence opens on. */
interface Fence {
  readonly lang: string;
  readonly lines: readonly string[];
  readonly start: number;
}

export function fences(text: string): Fence[] {
  const lines = text.split('\n');
  const out: Fence[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    if (end < 0) throw new Error(`unclosed fence at line ${i + 1}`);
    out.push({ lang: open[1], lines: lines.slice(i + 1, end), start: i });
    i = end;
  }
  return out;
}

/** A ```sh block's line as the test keys it: a trailing `# comment` dropped, spaces trimmed. */
export function commandOf(line: string): string {
  return line.replace(/\s+#\s.*$/, '').trim();
}

/** Every command line of every ```sh block of the docs, in reading order, with the file it is in. */
export function shCommands(): { file: string; command: string }[] {
  return docFiles().flatMap((file) =>
    fences(readDoc(file))
      .filter((f) => f.lang === 'sh')
      .flatMap((f) => f.lines.map(commandOf).filter((c) => c !== '' && !c.startsWith('#')))
      .map((command) => ({ file, command })),
  );
}

/** A markdown table: header cells, body rows by header, the line it starts on, and the comment above it. */
export interface Table {
  readonly file: string;
  readonly line: number;
  readonly head: readonly string[];
  readonly rows: readonly Readonly<Record<string, string>>[];
  /** `kind: text` of the `<!-- kind: text -->` comment right above the table (blank lines between allowed). */
  readonly marker: { readonly kind: string; readonly text: string } | null;
}

/** A cell as read: markdown emphasis and code ticks dropped, spaces trimmed. */
function cellText(c: string): string {
  return c.replace(/\*\*|`/g, '').trim();
}

const splitRow = (l: string) => l.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map(cellText);

/** The `<!-- kind: text -->` comment that ends right above line `i` (blank lines between allowed). */
function markerAbove(lines: readonly string[], i: number): Table['marker'] {
  let j = i - 1;
  while (j >= 0 && lines[j].trim() === '') j--;
  const m = j >= 0 ? /^<!--\s*([a-z]+):\s*([\s\S]*?)\s*-->\s*$/.exec(lines[j]) : null;
  return m ? { kind: m[1], text: m[2] } : null;
}

export function tables(file: string): Table[] {
  const lines = readDoc(file).split('\n');
  const out: Table[] = [];
  let inFence = false;
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].startsWith('```')) inFence = !inFence;
    if (inFence || !lines[i].startsWith('|') || !/^\|[\s:|-]+\|\s*$/.test(lines[i + 1] ?? '')) continue;
    const head = splitRow(lines[i]);
    let end = i + 2;
    while (end < lines.length && lines[end].startsWith('|')) end++;
    const rows = lines.slice(i + 2, end).map((l) => Object.fromEntries(splitRow(l).map((c, k) => [head[k], c])));
    out.push({ file, line: i + 1, head, rows, marker: markerAbove(lines, i) });
    i = end - 1;
  }
  return out;
}

/** `<!-- output: CMD -->` right above a fenced block: the command and the block's text. */
export function outputBlocks(file: string): { command: string; text: string; line: number }[] {
  const lines = readDoc(file).split('\n');
  return fences(readDoc(file)).flatMap((f) => {
    const m = markerAbove(lines, f.start);
    return m?.kind === 'output' ? [{ command: m.text, text: f.lines.join('\n'), line: f.start + 1 }] : [];
  });
}

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `bash -c LINE` in the repository root, as a reader would type it. */
export function runLine(line: string, timeoutMs = 60_000): Run {
  const r = spawnSync('bash', ['-c', line], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: timeoutMs,
    maxBuffer: 256 * 1024 * 1024,
  });
  // a tool that colours its output anyway (vitest under vitest): the text without the colours
  return { status: r.status, stdout: stripVTControlCharacters(r.stdout), stderr: stripVTControlCharacters(r.stderr) };
}
