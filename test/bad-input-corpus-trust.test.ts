/**
 * The bad-input corpus, continued for the cases of "trust at the edges": misuse that used to report
 * success while changing nothing (or the wrong thing), run through the CLI's `main()` in this process
 * (the process boundary is not under test here; test/cli-exit.test.ts covers it). Each case builds
 * its own table, then asserts the exit code (1 failed, 2 bad usage), the one-line message naming the
 * column, option or id, no stack trace, and that the table is exactly as before, file for file.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { main } from '@tidemark/cli';
import { runMain, TextCapture, type MainResult } from './support/cli-main.js';
import { fileState } from './support/file-state.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tidemark-corpus-trust-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `tidemark <args>` and expects it to succeed without a word on stderr. */
async function ok(args: string[], stdin?: string): Promise<MainResult> {
  const r = await runMain(args, stdin !== undefined ? { stdin } : {});
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r;
}

const KV = JSON.stringify([
  { name: 'k', type: 'INT NOT NULL' },
  { name: 'v', type: 'STRING' },
  { name: 's', type: 'BIGINT' },
]);

/** A primary-key table (k, v, s) with `options`, holding rows k=1 (v 'a', s 5) and k=2 (v 'b', s 9). */
async function keyValueTable(table: string, ...options: string[]): Promise<void> {
  await ok(['create', table, '--schema', KV, '--primary-key', 'k', ...options.flatMap((o) => ['--option', o])]);
  await ok(['write', table], '{"k":1,"v":"a","s":5}\n{"k":2,"v":"b","s":9}\n');
}

interface Case {
  readonly name: string;
  /** Builds the case's table at `table`. */
  readonly setup: (table: string) => Promise<void>;
  readonly args: (table: string) => string[];
  readonly stdin?: string;
  readonly code: 1 | 2;
  readonly message: RegExp;
}

const cases: Case[] = [
  // update: assignments the merge engine would ignore
  {
    name: 'update sets a column to null on a partial-update table',
    setup: (t) => keyValueTable(t, 'merge-engine=partial-update'),
    args: (t) => ['update', t, '--where', 'k = 1', '--set', '{"v": null}'],
    code: 1,
    message: /^tidemark update: column 'v': cannot be set to null: merge engine partial-update never overwrites a value with null/m,
  },
  {
    name: 'update lowers the sequence.field value',
    setup: (t) => keyValueTable(t, 'sequence.field=s'),
    args: (t) => ['update', t, '--where', 'k = 2', '--set', '{"s": 3, "v": "x"}'],
    code: 1,
    message: /^tidemark update: column 's': in the row with k=2, the new value 3 is lower than the current 9 .*would change nothing$/m,
  },
  {
    name: 'update sets the sequence.field to null',
    setup: (t) => keyValueTable(t, 'sequence.field=s'),
    args: (t) => ['update', t, '--where', 'k = 1', '--set', '{"s": null}', '--dry-run'],
    code: 1,
    message: /^tidemark update: column 's': in the row with k=1, the new value null sorts before the current 5/m,
  },
  // consumers
  {
    name: 'consumers reset of an unknown consumer id',
    setup: async (t) => {
      await keyValueTable(t);
      await ok(['stream', t, '--consumer-id', 'known', '--max-snapshots', '1']);
    },
    args: (t) => ['consumers', 'reset', t, 'typo', '--snapshot', '1'],
    code: 2,
    message: /^tidemark consumers: consumer 'typo' does not exist \(consumers: known\); pass --create to create it$/m,
  },
];

describe.concurrent('bad input (trust at the edges): clear error, right exit code, table unchanged', () => {
  for (const [i, c] of cases.entries()) {
    it(c.name, async () => {
      const table = join(dir, 'cases', String(i), 'wh', 'db.db', 't');
      await c.setup(table);
      const before = fileState(table);
      const r = await runMain(c.args(table), c.stdin !== undefined ? { stdin: c.stdin } : {});
      expect(r.stderr).toMatch(c.message);
      expect(r.code).toBe(c.code);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.stderr).not.toMatch(/unexpected error:/);
      expect(fileState(table)).toEqual(before);
    });
  }
});

let duckdb = true;
try {
  await import('@duckdb/node-api');
} catch (e) {
  duckdb = false;
  console.warn(`[tidemark] SKIPPED the empty-result sql test: @duckdb/node-api cannot be loaded (${(e as Error).message})`);
}

describe('inputs that used to fail or do nothing now do what the docs say', () => {
  it('remove-orphan-files racing expire-snapshots: both succeed and every remaining snapshot reads', async () => {
    const t = join(dir, 'orphan-race', 'wh', 'db.db', 't');
    await ok(['create', t, '--schema', KV, '--option', 'write-only=true']);
    for (let i = 0; i < 24; i++) await ok(['write', t], `{"k":${i},"v":"v${i}"}\n`);
    for (const retain of [20, 16, 12, 8, 4, 1]) {
      const [expired, cleaned] = await Promise.all([
        runMain(['expire-snapshots', t, '--retain-min', '1', '--retain-max', String(retain)]),
        runMain(['remove-orphan-files', t, '--older-than', '0']),
      ]);
      expect(expired.stderr).toBe('');
      expect(cleaned.stderr.replace(/^tidemark: warning: --older-than is under 1 hour.*\n/m, '')).toBe('');
      expect([expired.code, cleaned.code]).toEqual([0, 0]);
    }
    expect((await ok(['verify', t, '--all'])).code).toBe(0);
    expect((await ok(['count', t])).stdout.trim()).toBe('24');
  });

  it('a dynamic-bucket write whose base snapshot expires before its commit re-plans and commits', async () => {
    const t = join(dir, 'dyn-replan', 'wh', 'db.db', 't');
    await ok(['create', t, '--schema', KV, '--primary-key', 'k', '--option', 'bucket=-1']);
    await ok(['write', t], '{"k":0,"v":"first"}\n');
    // One full chunk (10,000 rows) reaches the writer, which assigns its buckets against snapshot 1;
    // then, while the input is held open, other writes land and expiration removes snapshot 1.
    const head = Array.from({ length: 10_000 }, (_, i) => JSON.stringify({ k: i + 1, v: 'x' })).join('\n') + '\n';
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let headRead!: () => void;
    const headWasRead = new Promise<void>((r) => (headRead = r));
    const stdin = Readable.from(
      (async function* () {
        yield head;
        // The reader asks for more only once the chunk is written: the assignment has happened.
        headRead();
        await released;
        yield '{"k":20000,"v":"last"}\n';
      })(),
    );
    const stdout = new TextCapture();
    const stderr = new TextCapture();
    const running = main(['write', t], { signal: new AbortController().signal, env: {}, stdout, stderr, stdin });
    await headWasRead;
    await ok(['write', t], '{"k":30000,"v":"other"}\n');
    await ok(['write', t], '{"k":30001,"v":"other"}\n');
    await ok(['expire-snapshots', t, '--retain-min', '1', '--retain-max', '1']);
    release();
    const code = await running;
    expect(stderr.text).toBe('');
    expect(code).toBe(0);
    expect(stdout.text).toMatch(/^committed snapshot \d+ \(10001 rows\)$/m);
    expect((await ok(['count', t])).stdout.trim()).toBe(String(10_001 + 3));
  });

  it('compact --full --partition --dry-run plans the one file of a partition whose rows are deleted by vector', async () => {
    const t = join(dir, 'dv-full', 'wh', 'db.db', 't');
    const schema = JSON.stringify([
      { name: 'id', type: 'INT NOT NULL' },
      { name: 'day', type: 'STRING NOT NULL' },
    ]);
    await ok(['create', t, '--schema', schema, '--partition', 'day', '--option', 'deletion-vectors.enabled=true']);
    const rows = Array.from({ length: 500 }, (_, i) => JSON.stringify({ id: i, day: '2024-05-01' })).join('\n');
    await ok(['write', t], rows + '\n');
    await ok(['delete', t, '--where', 'id < 200']);
    const dry = await ok(['compact', t, '--full', '--partition', 'day=2024-05-01', '--dry-run', '--json']);
    expect(JSON.parse(dry.stdout)).toMatchObject({ dryRun: true, filesBefore: 1, rows: 300 });
    await ok(['compact', t, '--full', '--partition', 'day=2024-05-01']);
    expect((await ok(['count', t])).stdout.trim()).toBe('300');
    const again = await ok(['compact', t, '--full', '--dry-run', '--json']);
    expect(JSON.parse(again.stdout)).toMatchObject({ filesBefore: 0 });
  });

  it('time travel to the write snapshot of a deletion-vector table says on stderr why it shows no rows', async () => {
    const t = join(dir, 'dv-travel', 'wh', 'db.db', 't');
    await keyValueTable(t, 'deletion-vectors.enabled=true', 'bucket=1');
    const snapshots = (await ok(['snapshots', t, '--json'])).stdout.trim().split('\n');
    expect(snapshots.map((l) => (JSON.parse(l) as { kind: string }).kind)).toEqual(['APPEND', 'COMPACT']);
    const travel = await runMain(['count', t, '--snapshot', '1']);
    expect(travel.code).toBe(0);
    expect(travel.stdout.trim()).toBe('0'); // as in Java
    expect(travel.stderr).toMatch(
      /^tidemark: warning: .*snapshot 1 has 2 rows in 1 level-0 file that are not visible to batch reads of a deletion-vector table until compacted .*COMPACT snapshot/,
    );
    expect(travel.stderr.trim().split('\n')).toHaveLength(1);
    const compacted = await ok(['count', t, '--snapshot', '2']);
    expect(compacted.stdout.trim()).toBe('2');
  });

  it.skipIf(!duckdb)('sql with an empty result prints the header (or an empty result) in every format and exits 0', async () => {
    const t = join(dir, 'sql', 'wh', 'db.db', 't');
    await keyValueTable(t);
    const query = 'SELECT k AS key_col, v AS value_col FROM t WHERE false';
    const sql = (...rest: string[]): Promise<MainResult> => ok(['sql', query, '--table', `t=${t}`, ...rest]);
    expect((await sql()).stdout).toBe('');
    expect((await sql('--format', 'jsonl')).stdout).toBe('');
    expect((await sql('--format', 'csv')).stdout).toBe('key_col,value_col\r\n');
    expect((await sql('--format', 'table')).stdout).toMatch(/key_col.*value_col/);
    const parquet = join(dir, 'sql', 'empty.parquet');
    await sql('--format', 'parquet', '--output', parquet);
    const fromParquet = (await ok(['sql', 'SELECT count(*) AS n, min(key_col) AS m FROM read_parquet(' + `'${parquet}')`])).stdout;
    expect(JSON.parse(fromParquet)).toEqual({ n: 0, m: null });
    const arrowFile = join(dir, 'sql', 'empty.arrow');
    await sql('--format', 'arrow', '--output', arrowFile);
    const ipc = tableFromIPC(readFileSync(arrowFile));
    expect(ipc.numRows).toBe(0);
    expect(ipc.schema.fields.map((f) => f.name)).toEqual(['key_col', 'value_col']);
  });
});
