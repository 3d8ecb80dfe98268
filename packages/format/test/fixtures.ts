import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Java-written fixture tables shared by the team (outside the repo). */
export const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), '../../../../shared/fixtures/paimon');
export const HAVE_FIXTURES = existsSync(FIXTURES);
if (!HAVE_FIXTURES) console.warn(`[tidemark] fixture directory ${FIXTURES} is missing: fixture tests are skipped`);

/** Absolute paths of all files in `<table>/<sub>/` of every fixture table whose name matches. */
export function fixtureFiles(sub: string, pattern: RegExp): string[] {
  if (!HAVE_FIXTURES) return [];
  const out: string[] = [];
  for (const wh of readdirSync(FIXTURES)) {
    const db = join(FIXTURES, wh, 'default.db');
    if (!existsSync(db)) continue;
    for (const table of readdirSync(db)) {
      const dir = join(db, table, sub);
      if (!existsSync(dir)) continue;
      for (const f of readdirSync(dir)) if (pattern.test(f)) out.push(join(dir, f));
    }
  }
  return out.sort();
}

export function hex(s: string): Uint8Array {
  return Uint8Array.from(Buffer.from(s.replace(/[\s|]/g, ''), 'hex'));
}

export function toHex(b: Uint8Array): string {
  return Buffer.from(b).toString('hex');
}
