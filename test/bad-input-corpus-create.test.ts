/**
 * Bad input to `tidemark create`: options that would make every later write fail are refused at
 * create, naming the option, with exit 1 and no table left behind; an unknown option key is
 * stored (as Paimon stores it) but reported at create with the nearest known key. Run in this
 * process through `main()`: what is under test is the message and the table, not the exit of a
 * process (test/bad-input-corpus.test.ts covers that).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runMain } from './support/cli-main.js';

const dir = mkdtempSync(join(tmpdir(), 'tidemark-corpus-create-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const schema = JSON.stringify([
  { name: 'id', type: 'INT' },
  { name: 'v', type: 'INT' },
  { name: 'p', type: 'STRING' },
]);

interface CreateCase {
  readonly name: string;
  readonly args: readonly string[];
  readonly message: RegExp;
}

const cases: CreateCase[] = [
  { name: 'merge-engine=bogus', args: ['--option', 'merge-engine=bogus'], message: /'merge-engine' has invalid value 'bogus'/ },
  {
    name: 'changelog-producer=lookups',
    args: ['--option', 'changelog-producer=lookups'],
    message: /'changelog-producer' has invalid value 'lookups'/,
  },
  {
    name: 'sequence.field naming a missing column',
    args: ['--option', 'sequence.field=nope'],
    message: /'sequence.field' names 'nope', which is not a column of the table \(columns: id, v, p\)/,
  },
  {
    name: 'fields.v.aggregate-function=bogus',
    args: ['--option', 'merge-engine=aggregation', '--option', 'fields.v.aggregate-function=bogus'],
    message: /'fields.v.aggregate-function' = 'bogus' is not an aggregate function/,
  },
  {
    name: 'num-sorted-run.compaction-trigger=0',
    args: ['--option', 'num-sorted-run.compaction-trigger=0'],
    message: /'num-sorted-run.compaction-trigger' = '0' is not a positive integer/,
  },
  {
    name: 'a primary key without the partition key',
    args: ['--partition', 'p', '--option', 'bucket=2'],
    message: /primary key \(id\) must include the partition key\(s\) p: .*use primary key \(id, p\)/,
  },
];

describe('create refuses options that make the table unusable', () => {
  for (const [i, c] of cases.entries()) {
    it(c.name, async () => {
      const table = join(dir, 'refused', String(i));
      const r = await runMain(['create', table, '--schema', schema, '--primary-key', 'id', ...c.args]);
      expect(r.stderr).toMatch(new RegExp(`^tidemark create: .*${c.message.source}`));
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(existsSync(table) ? readdirSync(table, { recursive: true }) : []).toEqual([]);
    });
  }
});

describe('unknown option keys', () => {
  it('a misspelt deletion-vectors.enabled is stored but reported at create, naming the key meant', async () => {
    const table = join(dir, 'typo');
    const r = await runMain(['create', table, '--schema', schema, '--primary-key', 'id', '--option', 'deletion-vector.enabled=true']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(
      `tidemark create: warning: ${table} (schema 0): unknown table option 'deletion-vector.enabled' (did you mean 'deletion-vectors.enabled'?) is ignored\n`,
    );
    expect(r.stdout).toMatch(/^created table /);
  });

  it('a key Paimon knows and tidemark ignores is accepted silently', async () => {
    const r = await runMain(['create', join(dir, 'known'), '--schema', schema, '--option', 'sort-engine=loser-tree']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
  });
});
