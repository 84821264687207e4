// textTable: the one fixed-width layout of the CLI's tables (compare, sweep, diff, analyze).
import { describe, expect, it } from 'vitest';
import { textTable } from '../../../src/cli/cli_format';

describe('textTable', () => {
  it('pads each column to its widest cell, text left and figures right, two spaces apart', () => {
    const t = textTable(
      ['backend', 'ms'],
      [
        ['a', '1.25'],
        ['aot_eager', '10.5'],
      ],
    );
    expect(t.split('\n')).toEqual(['backend      ms', 'a          1.25', 'aot_eager  10.5']);
  });

  it('puts a rule of dashes under the header, and trims a left-aligned last column', () => {
    const t = textTable(
      ['n', 'why'],
      [
        ['1', 'a'],
        ['22', 'longer'],
      ],
      { left: (i) => i === 1, rule: true },
    );
    expect(t.split('\n')).toEqual([' n  why', '--  ------', ' 1  a', '22  longer']);
  });
});
