/**
 * A small partitioned table made with the `tidemark` CLI, for suites that damage copies of it
 * (the pristine one stays as it was): `id BIGINT, p STRING`, partitioned by `p`, one snapshot
 * per write.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { runTidemark, type RunOptions } from './cli-process.js';

export interface PristineCliTable {
  /** The temp directory holding the table and its copies. */
  readonly dir: string;
  /** The table location (never changed by the suite). */
  readonly pristine: string;
  /** A copy of the table at `<dir>/<name>/db.db/t`. */
  copy(name: string): string;
  /** Deletes the directory. */
  remove(): void;
}

/** Creates the table and commits each of `writes` (JSON lines) as one `tidemark write`. */
export async function createPristineCliTable(prefix: string, writes: readonly string[], guard: RunOptions): Promise<PristineCliTable> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const pristine = join(dir, 'pristine', 'db.db', 't');
  const schema = '[{"name":"id","type":"BIGINT"},{"name":"p","type":"STRING"}]';
  expect((await runTidemark(['create', pristine, '--schema', schema, '--partition', 'p'], guard)).code).toBe(0);
  for (const stdin of writes) expect((await runTidemark(['write', pristine], { stdin, ...guard })).code).toBe(0);
  return {
    dir,
    pristine,
    copy(name) {
      const t = join(dir, name, 'db.db', 't');
      cpSync(pristine, t, { recursive: true });
      return t;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
