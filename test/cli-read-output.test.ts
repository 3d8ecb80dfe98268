/**
 * `tidemark read --format arrow|parquet [--output]`, `read --incremental-between` and
 * `tidemark count`, through the built binary, on local disk and on the real S3 server.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalFileIO, joinPath } from '@tidemark/storage';
import { readParquetFile, readParquetFooter } from '@tidemark/format';
import { storageBackends, type BackendWarehouse } from './support/backends.js';
import { backendEnv, cliFor, lines, runTidemarkBinary } from './support/cli-backend.js';
import { columns } from './support/table-definitions.mjs';

const SCHEMA = JSON.stringify(
  columns('id BIGINT NOT NULL', 'name STRING', 'amount DECIMAL(10, 2)', 'at TIMESTAMP(3)', 'day STRING NOT NULL'),
);
const row = (id: number, day: string, name: string | null = `n${id}`) =>
  JSON.stringify({ id, name, amount: `${id}.25`, at: `2024-05-0${day.slice(-1)}T10:00:00.${String(id).padStart(3, '0')}`, day });
/** Commits 1, 2 and 3 (tag 'two' on snapshot 2). */
const COMMITS = [[row(1, '2024-05-01'), row(2, '2024-05-01', null)], [row(3, '2024-05-02'), row(4, '2024-05-02')], [row(5, '2024-05-03')]];
const sortedJson = (text: string): string[] => lines(text).sort();

const outDir = mkdtempSync(join(tmpdir(), 'tidemark-read-output-'));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

// Backends and cases share nothing they change (each case writes its own output file or table), so
// they all run concurrently: each case is a few CLI processes, which the cores and S3's latency overlap.
// Cases running side by side each take longer than alone: the timeout is a hang guard, not a speed check.
describe.concurrent.each(storageBackends('cli read output'))('$name', { timeout: 180_000 }, (backend) => {
  const cli = cliFor(backend);
  /** This backend's output files: the other backend's, written at the same time, are not in it. */
  const out = join(outDir, backend.name === 'S3' ? 's3' : 'local');
  let wh: BackendWarehouse | undefined;
  let table = '';
  let pk = '';
  beforeAll(async () => {
    if (!backend.available) return;
    mkdirSync(out);
    wh = await backend.open();
    table = joinPath(wh.root, 'shop.db', 'orders');
    pk = joinPath(wh.root, 'shop.db', 'users');
    const users = JSON.stringify(columns('id BIGINT NOT NULL', 'v STRING'));
    // The two tables are independent: each one's commands run in order, the two side by side.
    await Promise.all([
      (async () => {
        expect((await cli(['create', table, '--schema', SCHEMA, '--partition', 'day'])).code).toBe(0);
        for (const [i, rows] of COMMITS.entries()) {
          const w = await cli(['write', table], { stdin: rows.join('\n') + '\n' });
          expect(w.stdout).toContain(`committed snapshot ${i + 1}`);
        }
        expect((await cli(['tag', 'create', table, 'two', '--snapshot', '2'])).code).toBe(0);
      })(),
      (async () => {
        expect((await cli(['create', pk, '--schema', users, '--primary-key', 'id', '--option', 'bucket=2'])).code).toBe(0);
        await cli(['write', pk], { stdin: '{"id":1,"v":"a"}\n{"id":2,"v":"b"}\n{"id":3,"v":"c"}\n' });
        await cli(['write', pk], { stdin: '{"id":1,"v":"a2"}\n{"id":2,"v":"b2"}\n' });
      })(),
    ]);
  }, 120_000);
  afterAll(async () => wh?.cleanup());

  describe.skipIf(!backend.available)('read', () => {
    it('--format arrow --output writes an Arrow IPC file with the table schema, field ids and every row', async () => {
      const file = join(out, `${backend.name}-orders.arrow`);
      const r = await cli(['read', table, '--format', 'arrow', '--output', file]);
      expect(r.stderr).not.toMatch(/tidemark|Error/); // the AWS SDK may warn about the Node version
      expect(r.code).toBe(0);
      const bytes = readFileSync(file);
      expect(bytes.subarray(0, 6).toString()).toBe('ARROW1'); // the file format (seekable), not the stream format
      const t = tableFromIPC(bytes);
      expect(t.schema.fields.map((f) => [f.name, String(f.type), f.metadata.get('PARQUET:field_id')])).toEqual([
        ['id', 'Int64', '0'],
        ['name', 'Utf8', '1'],
        ['amount', 'Decimal[10e+2]', '2'],
        ['at', 'Timestamp<MILLISECOND>', '3'],
        ['day', 'Utf8', '4'],
      ]);
      const ids = Array.from(t.getChild('id')!.toArray() as BigInt64Array, (x) => Number(x)).sort();
      expect(ids).toEqual([1, 2, 3, 4, 5]);
      expect(t.toArray().find((x) => Number(x.id) === 2)!.name).toBeNull();
    });

    it('--format arrow to a pipe writes the Arrow IPC stream format', async () => {
      const r = await runTidemarkBinary(['read', table, '--format', 'arrow', '--where', "day = '2024-05-02'"], backendEnv(backend));
      expect(r.stderr).not.toMatch(/tidemark|Error/); // the AWS SDK may warn about the Node version
      expect(r.code).toBe(0);
      expect(r.stdout.subarray(0, 6).toString()).not.toBe('ARROW1');
      const t = tableFromIPC(r.stdout);
      expect(t.numRows).toBe(2);
      expect(t.schema.fields.map((f) => f.name)).toEqual(['id', 'name', 'amount', 'at', 'day']);
    });

    it('--format parquet --output keeps the table types and field ids, and writes back into a table unchanged', async () => {
      const file = join(out, `${backend.name}-orders.parquet`);
      expect((await cli(['read', table, '--format', 'parquet', '--output', file])).code).toBe(0);
      const io = new LocalFileIO();
      const footer = await readParquetFooter(io, file);
      expect([...footer.topLevelFieldIds]).toEqual([
        ['id', 0],
        ['name', 1],
        ['amount', 2],
        ['at', 3],
        ['day', 4],
      ]);
      const logical = Object.fromEntries(footer.leafColumns.map((c) => [c.path[0], c.element.logical_type?.type]));
      expect(logical).toMatchObject({ amount: 'DECIMAL', at: 'TIMESTAMP', name: 'STRING', day: 'STRING' });
      let rows = 0;
      for await (const b of readParquetFile(io, file)) rows += b.numRows;
      expect(rows).toBe(5);
      // The same rows through `write --format parquet` into a fresh table with the same schema.
      const copy = joinPath(wh!.root, 'shop.db', `copy_${backend.name === 'S3' ? 's3' : 'local'}`);
      expect((await cli(['create', copy, '--schema', SCHEMA, '--partition', 'day'])).code).toBe(0);
      expect((await cli(['write', copy, '--format', 'parquet', '--input', file])).stdout).toContain('(5 rows)');
      expect(sortedJson((await cli(['read', copy])).stdout)).toEqual(sortedJson((await cli(['read', table])).stdout));
    });

    it('a failing read leaves no --output file behind, not even a partial one', async () => {
      const file = join(out, `${backend.name}-broken.parquet`);
      const r = await cli(['read', table, '--format', 'parquet', '--columns', 'id,nope', '--output', file]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("unknown column 'nope'");
      expect(existsSync(file)).toBe(false);
      expect(readdirSync(out).filter((f) => f.includes('broken'))).toEqual([]);
      const missingDir = await cli(['read', table, '--output', join(out, 'no-such-dir', 'x.jsonl')]);
      expect(missingDir.code).toBe(1);
      expect(missingDir.stderr).toContain('no-such-dir does not exist');
    });

    it('--incremental-between A,B prints the rows added after A up to B (snapshot ids or tags)', async () => {
      const ids = async (args: string[]): Promise<number[]> =>
        lines((await cli(['read', table, ...args])).stdout)
          .map((l) => (JSON.parse(l) as { id: number }).id)
          .sort();
      expect(await ids(['--incremental-between', '1,3'])).toEqual([3, 4, 5]);
      expect(await ids(['--incremental-between', '0,1'])).toEqual([1, 2]);
      expect(await ids(['--incremental-between', 'two,3'])).toEqual([5]);
      expect(await ids(['--incremental-between', '1,two', '--columns', 'id'])).toEqual([3, 4]);
      const back = await cli(['read', table, '--incremental-between', '3,1']);
      expect(back.code).toBe(2);
      expect(back.stderr).toContain('the end (snapshot 1) is before the start (snapshot 3)');
      const tag = await cli(['read', table, '--incremental-between', '1,nope']);
      expect(tag.code).toBe(1);
      expect(tag.stderr).toContain("tag 'nope' does not exist");
      const conflict = await cli(['read', table, '--incremental-between', '1,2', '--snapshot', '1']);
      expect(conflict.code).toBe(2);
    });
  });

  describe.skipIf(!backend.available)('count', () => {
    it('counts an append table from the manifests, and with --where by reading', async () => {
      const json = async (args: string[]) => JSON.parse((await cli(['count', table, '--json', ...args])).stdout) as Record<string, unknown>;
      expect(await json([])).toEqual({ rows: 5, snapshotId: 3, method: 'manifests' });
      expect(await json(['--snapshot', '1'])).toEqual({ rows: 2, snapshotId: 1, method: 'manifests' });
      expect(await json(['--tag', 'two'])).toEqual({ rows: 4, snapshotId: 2, method: 'manifests' });
      expect(await json(['--where', "day = '2024-05-02' OR id = 5"])).toEqual({ rows: 3, snapshotId: 3, method: 'scan' });
      expect(await json(['--where', 'name IS NULL'])).toEqual({ rows: 1, snapshotId: 3, method: 'scan' });
      expect((await cli(['count', table])).stdout).toBe('5\n');
    });

    it('counts a primary-key table after merging (upserted keys once)', async () => {
      const r = JSON.parse((await cli(['count', pk, '--json'])).stdout) as Record<string, unknown>;
      expect(r).toEqual({ rows: 3, snapshotId: 2, method: 'scan' });
      expect(lines((await cli(['read', pk])).stdout)).toHaveLength(3);
      expect((await cli(['count', pk, '--where', "v = 'a2'"])).stdout).toBe('1\n');
    });
  });
});
