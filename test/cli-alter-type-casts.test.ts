/**
 * `tidemark alter <table> alter-type` beyond widening, on a table on local disk: the old Parquet
 * files are read through Paimon's cast rules by `read`, `--where` filters on the changed column see
 * the cast values, a value the rule cannot cast fails the command with its name, and the change
 * back makes the table readable again.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMain } from './support/cli-main.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tidemark-cli-casts-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function ok(argv: string[], stdin?: string): Promise<string> {
  const r = await runMain(argv, stdin === undefined ? {} : { stdin });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r.stdout;
}

const lines = (out: string): unknown[] =>
  out
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as unknown)
    .sort((a, b) => ((a as { id: number }).id < (b as { id: number }).id ? -1 : 1));

describe('tidemark alter alter-type with Paimon casts', () => {
  it('DOUBLE → STRING → INT, read and filtered through the casts; an uncastable value fails naming it', async () => {
    const t = join(dir, 'wh', 'db.db', 'casts');
    await ok(['create', t, '--schema', '[{"name":"id","type":"INT"},{"name":"v","type":"DOUBLE"},{"name":"s","type":"STRING"}]']);
    await ok(['write', t], '{"id":1,"v":1e7,"s":"12.9"}\n{"id":2,"v":0.5,"s":"x"}\n');

    await ok(['alter', t, 'alter-type', 'v', 'STRING']);
    expect(lines(await ok(['read', t, '--columns', 'id,v']))).toEqual([
      { id: 1, v: '1.0E7' },
      { id: 2, v: '0.5' },
    ]);
    expect(lines(await ok(['read', t, '--columns', 'id,v', '--where', "v = '1.0E7'"]))).toEqual([{ id: 1, v: '1.0E7' }]);

    // Files keep their DOUBLE: INT is read straight from it (truncated), not through STRING.
    await ok(['alter', t, 'alter-type', 'v', 'INT']);
    expect(lines(await ok(['read', t, '--columns', 'id,v', '--where', 'v < 1']))).toEqual([{ id: 2, v: 0 }]);

    await ok(['alter', t, 'alter-type', 's', 'INT']);
    const bad = await runMain(['read', t]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/column 's': cannot cast 'x' from STRING to INT \(StringToNumericPrimitiveCastRule/);
    expect(bad.stderr).not.toMatch(/unexpected/);
    await ok(['alter', t, 'alter-type', 's', 'STRING']);
    expect(lines(await ok(['read', t, '--columns', 'id,s']))).toEqual([
      { id: 1, s: '12.9' },
      { id: 2, s: 'x' },
    ]);
  });

  it('refuses a change Paimon has no cast for, naming the column and both types, and writes no schema', async () => {
    const t = join(dir, 'wh', 'db.db', 'refused');
    await ok(['create', t, '--schema', '[{"name":"id","type":"INT"},{"name":"d","type":"DATE"}]']);
    const r = await runMain(['alter', t, 'alter-type', 'd', 'INT']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot change column 'd' from DATE to INT: Paimon has no cast between these types/);
    expect(JSON.parse(await ok(['schema', t, '--json'])) as unknown).toMatchObject({ id: 0 });
  });
});
