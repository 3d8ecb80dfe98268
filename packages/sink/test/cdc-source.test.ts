import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { FileSystemCatalog, openTable, type Table } from '@tidemark/core';
import {
  CDC_ROW_KIND_FIELD,
  CdcEventError,
  CdcJsonLinesSource,
  CdcSchemaChangeError,
  runIngest,
  type CdcFormat,
  type SourceOffset,
} from '../src/index.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function sourceFile(lines: readonly unknown[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tidemark-cdc-'));
  dirs.push(dir);
  const path = join(dir, 'events.jsonl');
  await writeFile(path, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n');
  return path;
}

let n = 0;
async function pkTable(): Promise<{ table: Table; io: MemoryFileIO; location: string }> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://cdc-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', {
    fields: [
      { name: 'id', type: 'INT NOT NULL' },
      { name: 'name', type: 'STRING' },
      { name: 'w', type: 'DOUBLE' },
    ],
    primaryKeys: ['id'],
    options: { bucket: '1', 'changelog-producer': 'input' },
  });
  const location = catalog.tableLocation('db.t');
  return { table: await openTable(location, { fileIO: io }), io, location };
}

/** The same history in each format: insert 1 and 2, update 1, delete 2, insert 3. */
const SAMPLES: Record<CdcFormat, unknown[]> = {
  'debezium-json': [
    { before: null, after: { id: 1, name: 'a', w: 1.5 }, op: 'c', ts_ms: 1 },
    { schema: { type: 'struct' }, payload: { before: null, after: { id: 2, name: 'b', w: 2.5 }, op: 'r' } },
    { before: { id: 1, name: 'a', w: 1.5 }, after: { id: 1, name: 'a2', w: 1.75 }, op: 'u' },
    'null',
    { before: { id: 2, name: 'b', w: 2.5 }, after: null, op: 'd' },
    'null',
    { before: null, after: { id: 3, name: 'c', w: null }, op: 'c' },
  ],
  'canal-json': [
    { data: [{ id: '1', name: 'a', w: '1.5' }, { id: '2', name: 'b', w: '2.5' }], old: null, type: 'INSERT', isDdl: false, database: 'db', table: 't', pkNames: ['id'] },
    { data: [{ id: '1', name: 'a2', w: '1.75' }], old: [{ name: 'a', w: '1.5' }], type: 'UPDATE', isDdl: false },
    { data: [{ id: '2', name: 'b', w: '2.5' }], old: null, type: 'DELETE', isDdl: false },
    { data: [{ id: '3', name: 'c', w: null }], type: 'INSERT', isDdl: false },
  ],
  'maxwell-json': [
    { database: 'db', table: 't', type: 'bootstrap-start', data: {} },
    { database: 'db', table: 't', type: 'bootstrap-insert', data: { id: 1, name: 'a', w: 1.5 } },
    { database: 'db', table: 't', type: 'bootstrap-complete', data: {} },
    { database: 'db', table: 't', type: 'insert', data: { id: 2, name: 'b', w: 2.5 } },
    { database: 'db', table: 't', type: 'update', data: { id: 1, name: 'a2', w: 1.75 }, old: { name: 'a', w: 1.5 } },
    { database: 'db', table: 't', type: 'delete', data: { id: 2, name: 'b', w: 2.5 } },
    { database: 'db', table: 't', type: 'insert', data: { id: 3, name: 'c', w: null } },
  ],
};

const EXPECTED_CHANGES = ['+I 1 a 1.5', '+I 2 b 2.5', '-U 1 a 1.5', '+U 1 a2 1.75', '-D 2 b 2.5', '+I 3 c null'];

async function changes(table: Table): Promise<string[]> {
  const latest = (await table.snapshotManager.latestId())!;
  const out: string[] = [];
  for await (const b of table.newStreamRead({ from: 'earliest', to: latest })) {
    for (const r of b.batch.toArray()) {
      const o = r.toJSON() as { id: number; name: string; w: number | null; _row_kind: string };
      out.push(`${o._row_kind} ${o.id} ${o.name} ${o.w}`);
    }
  }
  return out;
}

describe('CDC sources', () => {
  for (const format of Object.keys(SAMPLES) as CdcFormat[]) {
    it(`${format}: inserts, updates, deletes land with their row kinds, one checkpoint per record`, async () => {
      const { table, io, location } = await pkTable();
      const path = await sourceFile(SAMPLES[format]);
      const summary = await runIngest({
        table: location,
        fileIO: io,
        source: new CdcJsonLinesSource(path, format),
        commitUser: `cdc-${format}`,
        rowKindField: CDC_ROW_KIND_FIELD,
        // A checkpoint between the -U and +U halves of an update.
        checkpointEvery: 1,
        parallelism: 1,
      });
      expect(summary.status).toBe('source-done');
      expect(summary.records).toBe(6);
      const rows = (await table.newRead().toArrowTable()).toArray().map((r) => JSON.stringify(r.toJSON()));
      expect(rows.sort()).toEqual(['{"id":1,"name":"a2","w":1.75}', '{"id":3,"name":"c","w":null}']);
      expect(await changes(table)).toEqual(EXPECTED_CHANGES);
      // A rerun finds everything committed.
      const again = await runIngest({
        table: location,
        fileIO: io,
        source: new CdcJsonLinesSource(path, format),
        commitUser: `cdc-${format}`,
        rowKindField: CDC_ROW_KIND_FIELD,
        checkpointEvery: 1,
      });
      expect(again.records).toBe(0);
      expect(await changes(table)).toEqual(EXPECTED_CHANGES);
    });
  }

  it('an offset inside an update resumes with exactly its missing half', async () => {
    const path = await sourceFile(SAMPLES['canal-json']);
    const source = new CdcJsonLinesSource(path, 'canal-json');
    const all: Array<{ kind: unknown; offset: SourceOffset }> = [];
    for await (const r of source.open(null)) all.push({ kind: r.value[CDC_ROW_KIND_FIELD], offset: r.offset });
    expect(all.map((r) => r.kind)).toEqual(['+I', '+I', '-U', '+U', '-D', '+I']);
    // The first +I of a two-row INSERT and the -U of an UPDATE point back into their event.
    expect(all[0]!.offset).toEqual({ byte: 0, skip: 1 });
    expect(all[2]!.offset).toMatchObject({ skip: 1 });
    const resumed: unknown[] = [];
    for await (const r of source.open(all[2]!.offset)) resumed.push(r.value[CDC_ROW_KIND_FIELD]);
    expect(resumed).toEqual(['+U', '-D', '+I']);
    const fromZero: unknown[] = [];
    for await (const r of source.open(all[0]!.offset)) fromZero.push(r.value['id']);
    expect(fromZero).toEqual(['2', '1', '1', '2', '3']);
  });

  const SCHEMA_CHANGES: Array<[CdcFormat, unknown, RegExp]> = [
    ['debezium-json', { source: {}, databaseName: 'db', ddl: 'ALTER TABLE t ADD c INT', tableChanges: [] }, /debezium-json schema-change event: ALTER TABLE t ADD c INT/],
    ['canal-json', { data: null, type: 'ALTER', isDdl: true, sql: 'ALTER TABLE t DROP w' }, /canal-json schema-change event \(type ALTER\): ALTER TABLE t DROP w/],
    ['maxwell-json', { database: 'db', table: 't', type: 'table-alter', sql: 'ALTER TABLE t ADD c INT' }, /maxwell-json schema-change event \(type table-alter\)/],
  ];
  for (const [format, ddl, message] of SCHEMA_CHANGES) {
    it(`${format}: a schema-change event stops the ingestion naming it and its line; nothing after the last checkpoint lands`, async () => {
      const { table, io, location } = await pkTable();
      const path = await sourceFile([SAMPLES[format][0], ddl, SAMPLES[format][SAMPLES[format].length - 1]]);
      const run = runIngest({
        table: location,
        fileIO: io,
        source: new CdcJsonLinesSource(path, format),
        commitUser: 'u',
        rowKindField: CDC_ROW_KIND_FIELD,
        checkpointEvery: 1000,
      });
      const err = await run.then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(CdcSchemaChangeError);
      expect((err as Error).message).toMatch(message);
      expect((err as Error).message).toContain(`${path} line 2`);
      expect(await table.snapshotManager.latestId()).toBeNull();
    });
  }

  const BAD: Array<[CdcFormat, unknown, RegExp]> = [
    ['debezium-json', { before: null, after: { id: 1 }, op: 'x' }, /op 'x' is not a row change/],
    ['debezium-json', { before: null, after: null, op: 'c' }, /'after' must be a JSON object/],
    ['canal-json', { type: 'INSERT', isDdl: false }, /has no 'data' array/],
    ['maxwell-json', { type: 'upsert', data: { id: 1 } }, /type 'upsert' is not a row change/],
    ['maxwell-json', 'null', /a null event is not a maxwell-json event/],
  ];
  for (const [format, event, message] of BAD) {
    it(`${format}: a bad event (${message.source}) is refused naming its line`, async () => {
      const path = await sourceFile([SAMPLES[format][0], event]);
      const records: unknown[] = [];
      const err = await (async () => {
        for await (const r of new CdcJsonLinesSource(path, format).open(null)) records.push(r.value);
      })().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(CdcEventError);
      expect(err).not.toBeInstanceOf(CdcSchemaChangeError);
      expect((err as Error).message).toMatch(message);
      expect((err as Error).message).toContain('line 2');
    });
  }
});
