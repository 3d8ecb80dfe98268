/**
 * The write path end to end, one suite body run against local disk and the real S3 server:
 * every type round-trips (row objects and Arrow input), and a partitioned fixed-bucket table goes
 * through commits, time travel, overwrite, rollback, a deletion conflict, idempotent re-commits and
 * schema evolution; the manifests it leaves carry exactly the Appendix A Avro writer schemas.
 *
 * Expected values are written out by hand in the canonical form of support/arrow-canon.ts (exact
 * epoch values, decimal strings), never taken from tidemark's output.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { FileIO } from '@tidemark/storage';
import { MANIFEST_ENTRY_SCHEMA, MANIFEST_FILE_META_SCHEMA, readAvroHeader, toArrowType, type DataField } from '@tidemark/format';
import {
  CommitConflictError,
  CommitInputError,
  RollbackError,
  SchemaChanges,
  TimeTravelError,
  alterTable,
  type CommitResult,
  type ReadOptions,
  type Table,
  type TableSpec,
} from '@tidemark/core';
import { arrowTableFromCanon, canonicalRows, sortBy, type CanonRow } from './support/arrow-canon.js';
import { storageBackends } from './support/backends.js';
import { suiteCatalog } from './support/suite-catalog.js';
import { fixturesDir } from './support/fixtures.js';
import { ALL_TYPES, DAY_MS, TYPE_ROWS, bytes, withNulls } from './support/all-types.js';
import { columns } from './support/table-definitions.mjs';

// ---- every type ---------------------------------------------------------------------------------

/** Row-object input forms other than the canonical ones, with the canonical value each must give. */
const ALT_TYPES: TableSpec = {
  fields: columns(
    'id INT NOT NULL',
    'b BOOLEAN',
    'i64 BIGINT',
    'f FLOAT',
    'd DECIMAL(10, 2)',
    'bin BYTES',
    'dt DATE',
    't TIME(3)',
    'ts3 TIMESTAMP(3)',
    'ts6 TIMESTAMP(6)',
    'ts9 TIMESTAMP(9)',
    'ltz6 TIMESTAMP(6) WITH LOCAL TIME ZONE',
    'm MAP<STRING, INT>',
    'r ROW<a INT, b STRING>',
  ),
};
const ALT_INPUT: Record<string, unknown>[] = [
  {
    id: 1,
    b: 'true',
    i64: '-9223372036854775808',
    f: '1.5',
    d: -0.05,
    bin: Buffer.from([1, 2]),
    dt: '1969-12-31',
    t: '23:59:59.999',
    ts3: '1969-12-31 23:59:59.999',
    ts6: '1969-07-20T20:17:40.123456',
    ts9: '1900-01-01 00:00:00.000000001',
    ltz6: '2024-01-01T10:00:00+02:00',
    m: new Map([['a', 1]]),
    r: [1, 'x'],
  },
  {
    id: 2,
    b: false,
    i64: 123,
    f: 'NaN',
    d: '1e3',
    bin: new Uint8Array([7]).buffer,
    dt: new Date(Date.UTC(1950, 5, 15)),
    t: 0,
    ts3: new Date(-1),
    ts6: { millis: -1, nanoOfMillis: 999_000 },
    ts9: { millis: -1, nanoOfMillis: 1 },
    ltz6: '1970-01-01T00:00:00Z',
    m: { z: 5 },
    r: { a: null, b: null },
  },
];
const ALT_EXPECTED: CanonRow[] = [
  {
    id: 1,
    b: true,
    i64: -(2n ** 63n),
    f: 1.5,
    d: '-0.05',
    bin: bytes(1, 2),
    dt: -1,
    t: DAY_MS - 1,
    ts3: -1n,
    ts6: -14182939876544n,
    ts9: -2208988799999999999n,
    ltz6: 1704096000000000n,
    m: [['a', 1]],
    r: { a: 1, b: 'x' },
  },
  {
    id: 2,
    b: false,
    i64: 123n,
    f: Number.NaN,
    d: '1000.00',
    bin: bytes(7),
    dt: -7140,
    t: 0,
    ts3: -1n,
    ts6: -1n,
    ts9: -999_999n,
    ltz6: 0n,
    m: [['z', 5]],
    r: { a: null, b: null },
  },
];

// ---- the partitioned, fixed-bucket table -------------------------------------------------------

const EVENTS: TableSpec = {
  fields: columns('dt STRING', 'id BIGINT', 'v STRING', 'amount DECIMAL(10, 2)'),
  partitionKeys: ['dt'],
  options: { bucket: '3', 'bucket-key': 'id' },
};

/** Rows `from..to` of partition `dt`, labelled by the commit that writes them. */
function events(dt: string, from: number, to: number, label: string): CanonRow[] {
  const out: CanonRow[] = [];
  for (let i = from; i <= to; i++) out.push({ dt, id: BigInt(i), v: `${label}-${i}`, amount: `${i}.25` });
  return out;
}

async function readRows(table: Table, options: ReadOptions = {}, key = 'id'): Promise<CanonRow[]> {
  const read = table.newRead(options);
  const schema = await read.tableSchema();
  return sortBy(canonicalRows(await read.toArrowTable(), schema.fields), key);
}

/** Waits until the clock has passed `ms`, so the next snapshot's timeMillis is strictly later. */
async function after(ms: number): Promise<void> {
  while (Date.now() <= ms) await new Promise((r) => setTimeout(r, 2));
}

function committedId(result: CommitResult): number {
  if (result.status !== 'committed') throw new Error(`expected a committed result, got ${JSON.stringify(result)}`);
  return result.snapshotId;
}

async function fileNames(table: Table, options: ReadOptions = {}): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const split of (await table.newRead(options).plan()).splits) for (const f of split.files) out.set(f.meta.fileName, f.path);
  return out;
}

async function listNames(io: FileIO, dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const st of io.list(dir)) out.push(st.path.slice(st.path.lastIndexOf('/') + 1));
  return out.sort();
}

// ---- the suite ---------------------------------------------------------------------------------

describe.each(storageBackends('write round trip'))('write round trip on $name', (backend) => {
  describe.skipIf(!backend.available)(`(${backend.name})`, () => {
    const env = suiteCatalog(backend);

    describe('every type', () => {
      async function roundTrip(name: string, input: (fields: readonly DataField[]) => Parameters<Table['append']>[0]): Promise<void> {
        const schema = await env.catalog.createTable(`db.${name}`, ALL_TYPES);
        const table = await env.catalog.getTable(`db.${name}`);
        expect(committedId(await table.append(input(schema.fields)))).toBe(1);
        const read = await table.newRead().toArrowTable();
        // The result uses the shared Paimon → Arrow mapping …
        expect(read.schema.fields.map((f) => `${f.name}: ${String(f.type)} ${f.nullable}`)).toEqual(
          schema.fields.map((f) => `${f.name}: ${String(toArrowType(f.type))} ${f.type.nullable}`),
        );
        // … and holds exactly the values written.
        expect(sortBy(canonicalRows(read, schema.fields), 'id')).toEqual(withNulls(schema.fields, TYPE_ROWS));
      }

      it('round-trips every type written as row objects, with nulls and extreme values', async () => {
        await roundTrip('types_rows', () => TYPE_ROWS);
      });

      it('round-trips every type written as an Arrow table', async () => {
        await roundTrip('types_arrow', (fields) => arrowTableFromCanon(fields, withNulls(fields, TYPE_ROWS)));
      });

      it('accepts the other row-object input forms (ISO text, Date, {millis, nanoOfMillis}, Map, objects)', async () => {
        const schema = await env.catalog.createTable('db.types_alt', ALT_TYPES);
        const table = await env.catalog.getTable('db.types_alt');
        committedId(await table.append(ALT_INPUT));
        expect(await readRows(table)).toEqual(withNulls(schema.fields, ALT_EXPECTED));
      });
    });

    describe('partitioned table with fixed buckets', () => {
      let table: Table;
      const c1 = events('2024-01-01', 1, 20, 'c1');
      const c2 = events('2024-01-02', 21, 40, 'c2');
      const c3 = [...events('2024-01-01', 41, 50, 'c3'), ...events('2024-01-03', 51, 55, 'c3')];
      const ow1 = events('2024-01-01', 101, 105, 'ow1');
      const ow2 = [...events('2024-01-02', 201, 203, 'ow2'), ...events('2024-01-04', 301, 302, 'ow2')];
      const inPartition = (rows: CanonRow[], dt: string): CanonRow[] => rows.filter((r) => r['dt'] === dt);
      const sorted = (rows: CanonRow[]): CanonRow[] => sortBy(rows, 'id');

      beforeAll(async () => {
        await env.catalog.createTable('db.events', EVENTS);
        table = await env.catalog.getTable('db.events');
      });

      it('three appends make snapshots 1..3 with rows in their hash buckets', async () => {
        for (const [i, rows] of [c1, c2, c3].entries()) {
          if (i > 0) await after((await table.snapshotManager.latest())!.timeMillis);
          expect(committedId(await table.append(rows))).toBe(i + 1);
        }
        expect(await table.snapshotManager.sortedIds()).toEqual([1, 2, 3]);
        const snaps = await Promise.all([1, 2, 3].map((id) => table.snapshotManager.snapshot(id)));
        expect(snaps.map((s) => [s.commitKind, s.totalRecordCount, s.deltaRecordCount])).toEqual([
          ['APPEND', 20, 20],
          ['APPEND', 40, 20],
          ['APPEND', 55, 15],
        ]);
        expect(await readRows(table)).toEqual(sorted([...c1, ...c2, ...c3]));
        const plan = await table.newRead().plan();
        expect(new Set(plan.splits.map((s) => s.partitionSpec['dt']))).toEqual(new Set(['2024-01-01', '2024-01-02', '2024-01-03']));
        for (const split of plan.splits) {
          expect(split.totalBuckets).toBe(3);
          expect(split.bucket).toBeGreaterThanOrEqual(0);
          expect(split.bucket).toBeLessThan(3);
          // A bucket's rows are read back from that bucket's directory only.
          const rows = await readRows(table, { partition: split.partitionSpec, bucket: split.bucket });
          expect(rows.length).toBe(split.files.reduce((n, f) => n + Number(f.meta.rowCount), 0));
          expect(rows.every((r) => r['dt'] === split.partitionSpec['dt'])).toBe(true);
        }
      });

      it('time travel by snapshot id, timestamp and tag returns the rows of that version', async () => {
        expect(await readRows(table, { snapshotId: 1 })).toEqual(sorted(c1));
        expect(await readRows(table, { snapshotId: 2 })).toEqual(sorted([...c1, ...c2]));
        const s2 = await table.snapshotManager.snapshot(2);
        expect(await readRows(table, { timestamp: s2.timeMillis })).toEqual(sorted([...c1, ...c2]));
        expect(await readRows(table, { timestamp: new Date(s2.timeMillis) })).toEqual(sorted([...c1, ...c2]));
        const s1 = await table.snapshotManager.snapshot(1);
        await expect(table.newRead({ timestamp: s1.timeMillis - 1 }).toArrowTable()).rejects.toBeInstanceOf(TimeTravelError);
        await table.createTag('v2', { snapshotId: 2 });
        expect((await table.listTags()).map((t) => [t.name, t.tag.id])).toEqual([['v2', 2]]);
        expect(await readRows(table, { tag: 'v2' })).toEqual(sorted([...c1, ...c2]));
        expect(await readRows(table)).toEqual(sorted([...c1, ...c2, ...c3]));
      });

      it('static partition overwrite replaces exactly that partition', async () => {
        await expect(table.overwrite(c2, { partition: { dt: '2024-01-01' } })).rejects.toBeInstanceOf(CommitInputError);
        expect(await table.snapshotManager.latestId()).toBe(3);
        const id = committedId(await table.overwrite(ow1, { partition: { dt: '2024-01-01' } }));
        expect(id).toBe(4);
        expect((await table.snapshotManager.snapshot(4)).commitKind).toBe('OVERWRITE');
        expect(await readRows(table)).toEqual(sorted([...c2, ...inPartition(c3, '2024-01-03'), ...ow1]));
      });

      it('dynamic partition overwrite replaces only the partitions receiving rows', async () => {
        await after((await table.snapshotManager.latest())!.timeMillis);
        expect(committedId(await table.overwrite(ow2))).toBe(5);
        expect((await table.snapshotManager.snapshot(5)).commitKind).toBe('OVERWRITE');
        expect(await readRows(table)).toEqual(sorted([...ow1, ...inPartition(c3, '2024-01-03'), ...ow2]));
      });

      it('rolls back to a snapshot (refused while a later tag exists) and to a tag, deleting orphaned files', async () => {
        await table.createTag('t5');
        const only5 = new Map(await fileNames(table, { snapshotId: 5 }));
        for (const name of (await fileNames(table, { snapshotId: 4 })).keys()) only5.delete(name);
        expect(only5.size).toBeGreaterThan(0);

        await expect(table.rollbackTo(4)).rejects.toBeInstanceOf(RollbackError);
        expect(await table.snapshotManager.latestId()).toBe(5);
        const r = await table.rollbackTo(4, { force: true });
        expect(r).toMatchObject({ snapshotId: 4, removedSnapshots: [5], removedTags: ['t5'] });
        expect(await table.snapshotManager.sortedIds()).toEqual([1, 2, 3, 4]);
        expect(await readRows(table)).toEqual(sorted([...c2, ...inPartition(c3, '2024-01-03'), ...ow1]));
        for (const path of only5.values()) expect(await env.wh.io.exists(path)).toBe(false);

        const r2 = await table.rollbackTo('v2');
        expect(r2.snapshotId).toBe(2);
        expect(await table.snapshotManager.sortedIds()).toEqual([1, 2]);
        expect(await table.snapshotManager.latestId()).toBe(2);
        expect(await readRows(table)).toEqual(sorted([...c1, ...c2]));
        // History continues contiguously after the rollback.
        expect(committedId(await table.append(c3))).toBe(3);
        expect(await readRows(table)).toEqual(sorted([...c1, ...c2, ...c3]));
      });

      it('a commit deleting a file another commit deleted first fails with CommitConflictError and changes nothing', async () => {
        const plan = await table.newRead().plan();
        const split = plan.splits[0]!;
        const victim = split.files[0]!.meta;
        const message = {
          partition: split.partition,
          bucket: split.bucket,
          totalBuckets: split.totalBuckets,
          newFiles: [],
          deletedFiles: [victim],
        };
        const before = await readRows(table);
        const first = table.newCommit({ commitUser: 'deleter-a' });
        const second = table.newCommit({ commitUser: 'deleter-b' });
        const id = committedId(await first.commit({ identifier: 1, messages: [message] }));
        const afterFirst = await readRows(table);
        expect(afterFirst.length).toBe(before.length - Number(victim.rowCount));
        expect((await table.snapshotManager.snapshot(id)).commitKind).toBe('OVERWRITE');

        const err = await second.commit({ identifier: 1, messages: [message] }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(CommitConflictError);
        expect((err as Error).message).toContain(victim.fileName);
        expect(await table.snapshotManager.latestId()).toBe(id);
        expect(await readRows(table)).toEqual(afterFirst);
      });

      it('re-committing the same (commitUser, identifier) is a no-op', async () => {
        const extra = events('2024-01-05', 401, 403, 'idem');
        const before = await readRows(table);
        const id = committedId(await table.append(extra, { commitUser: 'job-1', identifier: 7 }));
        expect(await readRows(table)).toEqual(sorted([...before, ...extra]));

        const again = await table.append(extra, { commitUser: 'job-1', identifier: 7 });
        expect(again.status).toBe('skipped');
        // Through the lower-level API too, with freshly written files, and for an older identifier.
        const writer = table.newBatchWrite();
        await writer.write(extra);
        const messages = await writer.prepareCommit();
        const commit = table.newCommit({ commitUser: 'job-1' });
        expect((await commit.commit({ identifier: 7, messages })).status).toBe('skipped');
        expect((await commit.commit({ identifier: 6, messages })).status).toBe('skipped');
        await writer.abort();
        await writer.close();
        expect(await table.snapshotManager.latestId()).toBe(id);
        expect(await readRows(table)).toEqual(sorted([...before, ...extra]));

        // Recovery: filterAndCommit skips what was committed and commits the rest, once.
        const w8 = table.newBatchWrite();
        await w8.write(events('2024-01-05', 404, 404, 'idem'));
        const m8 = await w8.prepareCommit();
        const results = await commit.filterAndCommit([
          { identifier: 7n, messages: [] },
          { identifier: 8n, messages: m8 },
        ]);
        expect(results.map((x) => x.status)).toEqual(['skipped', 'committed']);
        expect((await commit.filterAndCommit([{ identifier: 8n, messages: m8 }])).map((x) => x.status)).toEqual(['skipped']);
        await w8.close();
        expect(await table.snapshotManager.latestId()).toBe(id + 1);
        expect(await readRows(table)).toEqual(sorted([...before, ...extra, ...events('2024-01-05', 404, 404, 'idem')]));
      });

      it("writes manifests whose Avro header schema is exactly Appendix A's", async () => {
        const names = await listNames(env.wh.io, `${table.location}/manifest`);
        const lists = names.filter((n) => n.startsWith('manifest-list-'));
        const manifests = names.filter((n) => n.startsWith('manifest-') && !n.startsWith('manifest-list-'));
        expect(lists.length).toBeGreaterThan(0);
        expect(manifests.length).toBeGreaterThan(0);
        for (const [files, schema] of [
          [manifests, MANIFEST_ENTRY_SCHEMA],
          [lists, MANIFEST_FILE_META_SCHEMA],
        ] as const) {
          for (const name of files) {
            const path = `${table.location}/manifest/${name}`;
            const header = await readAvroHeader(await env.wh.io.read(path), { path });
            expect(header.schemaText, name).toBe(JSON.stringify(schema));
            expect(header.schema, name).toEqual(schema);
            expect([...header.metadata.keys()].sort(), name).toEqual(['avro.codec', 'avro.schema']);
            expect(header.codec, name).toBe('zstandard');
          }
        }
      });
    });

    describe('schema evolution', () => {
      it('add, rename, widen, drop and re-add: old and new rows read through field ids', async () => {
        await env.catalog.createTable('db.evolve', {
          fields: columns('id INT NOT NULL', 'name STRING', 'score INT', 'price FLOAT', 'amount DECIMAL(10, 2)', 'extra STRING'),
        });
        const v0 = await env.catalog.getTable('db.evolve');
        const oldRows: CanonRow[] = [
          { id: 1, name: 'alpha', score: 2147483647, price: 1.5, amount: '12.34', extra: 'old' },
          { id: 2, name: null, score: -5, price: Math.fround(0.1), amount: '-0.01', extra: null },
        ];
        committedId(await v0.append(oldRows));

        const s1 = await alterTable(env.wh.io, v0.paths, [
          SchemaChanges.addColumn('note', 'STRING'),
          SchemaChanges.renameColumn('name', 'title'),
          SchemaChanges.alterType('score', 'BIGINT'),
          SchemaChanges.alterType('price', 'DOUBLE'),
          SchemaChanges.alterType('amount', 'DECIMAL(20, 2)'),
        ]);
        expect(s1.id).toBe(1);
        expect(s1.fields.map((f) => [f.id, f.name])).toEqual([
          [0, 'id'],
          [1, 'title'],
          [2, 'score'],
          [3, 'price'],
          [4, 'amount'],
          [5, 'extra'],
          [6, 'note'],
        ]);
        const s2 = await alterTable(env.wh.io, v0.paths, [SchemaChanges.dropColumn('extra')]);
        const s3 = await alterTable(env.wh.io, v0.paths, [SchemaChanges.addColumn('extra', 'STRING')]);
        expect([s2.id, s3.id]).toEqual([2, 3]);
        expect(s3.fields.find((f) => f.name === 'extra')!.id).toBe(7); // a new column, not the dropped one

        const v3 = await env.catalog.getTable('db.evolve');
        const newRow: CanonRow = {
          id: 3,
          title: 'gamma',
          score: 2n ** 40n,
          price: 0.1,
          amount: '123456789012345678.99',
          extra: 'fresh',
          note: 'new',
        };
        expect(committedId(await v3.append([newRow]))).toBe(2);

        expect(await readRows(v3)).toEqual([
          { id: 1, title: 'alpha', score: 2147483647n, price: 1.5, amount: '12.34', extra: null, note: null },
          { id: 2, title: null, score: -5n, price: Math.fround(0.1), amount: '-0.01', extra: null, note: null },
          newRow,
        ]);
        // The old snapshot reads with its own schema.
        expect(await readRows(v3, { snapshotId: 1 })).toEqual(oldRows);
        const read = v3.newRead({ snapshotId: 1 });
        expect((await read.tableSchema()).id).toBe(0);
      });
    });
  });
});

// ---- Java-written manifests: their fields are a prefix of ours --------------------------------

const FIXTURES = fixturesDir('Java manifest header comparison');

describe.skipIf(FIXTURES === null)('manifest writer schemas against Java-written manifests', () => {
  it('every Java manifest header lists a prefix of our fields, names and types alike', async () => {
    const { LocalFileIO } = await import('@tidemark/storage');
    const io = new LocalFileIO();
    const found = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? found(join(dir, e.name)) : /^manifest-/.test(e.name) && dir.endsWith('/manifest') ? [join(dir, e.name)] : [],
      );
    const files = found(FIXTURES!);
    expect(files.length).toBeGreaterThan(0);
    for (const path of files) {
      const ours = path.slice(path.lastIndexOf('/') + 1).startsWith('manifest-list-') ? MANIFEST_FILE_META_SCHEMA : MANIFEST_ENTRY_SCHEMA;
      const header = await readAvroHeader(await io.read(path), { path });
      const theirs = header.schema;
      expect({ ...theirs, fields: undefined }, path).toEqual({ ...ours, fields: undefined });
      const fields = theirs['fields'] as unknown[];
      const ourFields = ours['fields'] as unknown[];
      // _FILE is a nested record: compare its fields as a prefix too.
      for (let i = 0; i < fields.length; i++) {
        const a = fields[i] as { name: string; type: unknown };
        const b = ourFields[i] as { name: string; type: unknown };
        if (a.name === '_FILE') {
          const fa = (a.type as { fields: unknown[] }).fields;
          const fb = (b.type as { fields: unknown[] }).fields;
          expect(fb.slice(0, fa.length), path).toEqual(fa);
        } else {
          expect(b, path).toEqual(a);
        }
      }
    }
  });
});
