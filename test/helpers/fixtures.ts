// The one way a test names a file of the repository: REPO_ROOT for any file (shaders/, docs/, the
// CLI's bin), fixturePath / fixtureUrl for a committed fixture under test/fixtures, resolved from
// this file (never the working directory, never a path outside the repository).
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The repository's root folder (absolute, no trailing separator). */
export const REPO_ROOT = resolve(fileURLToPath(new URL('../../', import.meta.url)));

/** The absolute path of a fixture under test/fixtures, from its parts ('hta/expected.json'; 'fx', name). */
export const fixturePath = (...rel: string[]): string => join(REPO_ROOT, 'test/fixtures', ...rel);

/** The file URL of a fixture; a folder's ('' or a path ending in '/') ends in '/', a base for `new URL(name, dir)`. */
export const fixtureUrl = (rel: string): URL =>
  pathToFileURL(fixturePath(rel) + (rel === '' || rel.endsWith('/') ? '/' : ''));

/** A fixture's text (utf-8). */
export const fixtureText = (rel: string): string => readFileSync(fixturePath(rel), 'utf8');

/** A fixture parsed as JSON. */
export const fixtureJson = (rel: string): unknown => JSON.parse(fixtureText(rel));
