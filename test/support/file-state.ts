/** What a table directory holds, to assert that a failed or dry-run command left it as it was. */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Every file under `root` with its size and content hash, sorted by path. */
export function fileState(root: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(`${relative(root, p)} ${statSync(p).size} ${createHash('sha1').update(readFileSync(p)).digest('hex')}`);
    }
  };
  walk(root);
  return out.sort();
}
