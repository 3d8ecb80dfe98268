/**
 * `write --dry-run` without `--overwrite`: the whole input is read and checked as a real write
 * checks it (a bad value fails naming its line), the rows it would append are counted per
 * partition, and nothing is written: the table's files are exactly as before. `LIKE` in a
 * `--where` on the same table. Run in this process through `main()`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMain } from './support/cli-main.js';
import { fileState } from './support/file-state.js';

const dir = mkdtempSync(join(tmpdir(), 'tidemark-write-dry-'));
const table = join(dir, 'wh', 'db.db', 'orders');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const jsonl = (rows: object[]): string => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

beforeAll(
  async () => {
    const schema = '[{"name":"id","type":"INT NOT NULL"},{"name":"day","type":"STRING"},{"name":"status","type":"STRING"}]';
    expect((await runMain(['create', table, '--schema', schema, '--partition', 'day'])).code).toBe(0);
    const w = await runMain(['write', table], {
      stdin: jsonl([
        { id: 1, day: 'a', status: 'paid' },
        { id: 2, day: 'b', status: 'open' },
      ]),
    });
    expect(w.code).toBe(0);
  },
  2 * 30_000 + 30_000,
);

describe('write --dry-run', () => {
  it('checks every row, reports what it would append per partition and writes nothing', async () => {
    const before = fileState(table);
    const input = jsonl([
      { id: 3, day: 'a', status: 'paid' },
      { id: 4, day: 'c', status: 'partly paid' },
      { id: 5, day: 'c', status: null },
    ]);
    const r = await runMain(['write', table, '--dry-run'], { stdin: input });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      'dry run: 3 rows checked; would append them to 2 partitions as one snapshot; nothing was written\n' +
        '  partition day=a: 1 row\n' +
        '  partition day=c: 2 rows\n',
    );
    expect(fileState(table)).toEqual(before);
    const json = await runMain(['write', table, '--dry-run', '--json'], { stdin: input });
    expect(JSON.parse(json.stdout)).toEqual({
      command: 'write',
      table,
      dryRun: true,
      status: 'dry-run',
      rows: 3,
      overwrite: false,
      partitions: [
        { partition: { day: 'a' }, rowsWritten: 1 },
        { partition: { day: 'c' }, rowsWritten: 2 },
      ],
    });
    expect(fileState(table)).toEqual(before);
  });

  it('fails on a bad row naming its line, like the real write, and writes nothing', async () => {
    const before = fileState(table);
    const input = join(dir, 'bad.jsonl');
    writeFileSync(
      input,
      jsonl([
        { id: 6, day: 'a' },
        { id: null, day: 'a' },
      ]),
    );
    const r = await runMain(['write', table, '--dry-run', '--input', input]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^tidemark write: input line 2, column 'id': .*NULL/);
    expect(fileState(table)).toEqual(before);
  });

  it('checks a Parquet file the same way', async () => {
    const parquet = join(dir, 'rows.parquet');
    expect((await runMain(['read', table, '--format', 'parquet', '--output', parquet])).code).toBe(0);
    const before = fileState(table);
    const r = await runMain(['write', table, '--format', 'parquet', '--input', parquet, '--dry-run']);
    expect(r.stdout.split('\n')[0]).toBe('dry run: 2 rows checked; would append them to 2 partitions as one snapshot; nothing was written');
    expect(fileState(table)).toEqual(before);
  });
});

describe('--where with LIKE', () => {
  it('filters reads and counts by pattern', async () => {
    const paid = await runMain(['read', table, '--where', "status LIKE 'pa%'"]);
    expect(paid.stdout).toBe('{"id":1,"day":"a","status":"paid"}\n');
    expect((await runMain(['count', table, '--where', "status NOT LIKE 'pa%'"])).stdout).toBe('1\n');
    expect((await runMain(['count', table, '--where', "status LIKE '_pen' OR status IS NULL"])).stdout).toBe('1\n');
  });
});
