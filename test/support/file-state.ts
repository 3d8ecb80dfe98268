/**
 * The state of a directory tree as a list a test can compare before and after a command: each
 * file's path, size and content hash. A command that must leave a table as it was leaves this list
 * unchanged (snapshots, hints, manifests and data files included, and no file left behind).
 */
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
