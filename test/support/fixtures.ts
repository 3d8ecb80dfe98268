/**
 * The Java-Paimon-written reference tables live outside the repo, in `<repo>/../shared/fixtures/paimon`
 * (see its README.md). They are never copied into the project; suites that need them skip, with a
 * visible notice, when the directory is absent.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file is `<repo>/test/support/fixtures.ts`). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

const warned = new Set<string>();

/**
 * Absolute path of the Paimon fixtures directory, or null (after a console warning naming `suite`)
 * when it does not exist.
 */
export function fixturesDir(suite = 'fixture tests'): string | null {
  const dir = resolve(repoRoot, '..', 'shared', 'fixtures', 'paimon');
  if (existsSync(dir) && statSync(dir).isDirectory()) return dir;
  if (!warned.has(suite)) {
    warned.add(suite);
    console.warn(`[tidemark] SKIPPED ${suite}: the Paimon fixtures directory ${dir} does not exist.`);
  }
  return null;
}

/**
 * Absolute path of another shared fixtures directory (`orc` for the ORC project's test files,
 * `paimon-orc` for Java-written tables with ORC files), or null (after a console warning naming
 * `suite`) when it does not exist.
 */
export function sharedFixturesDir(name: 'orc' | 'paimon-orc', suite = 'fixture tests'): string | null {
  const dir = resolve(repoRoot, '..', 'shared', 'fixtures', name);
  if (existsSync(dir) && statSync(dir).isDirectory()) return dir;
  const key = `${name}:${suite}`;
  if (!warned.has(key)) {
    warned.add(key);
    console.warn(`[tidemark] SKIPPED ${suite}: the fixtures directory ${dir} does not exist.`);
  }
  return null;
}
