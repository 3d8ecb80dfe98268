import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryFileIO, type FileIO } from '@tidemark/storage';
import { parseJson, parseSchema, serializeSchema, type JsonObject, type TableSchema } from '@tidemark/format';
import {
  FileSystemCatalog,
  SchemaChangeError,
  SchemaChanges,
  SchemaManager,
  TablePaths,
  alterTable,
  type SchemaChange,
  type TableSpec,
} from '../src/index.js';
import { writeSnapshots } from './helpers.js';

const FIXTURES = join(__dirname, '../../../../shared/fixtures/paimon');
const EVOLVED = join(FIXTURES, 'append-schema-evolution/default.db/append_table_with_alter_table/schema');
const haveFixtures = existsSync(EVOLVED);
if (!haveFixtures) console.warn(`[schema-change.test] fixtures not found at ${EVOLVED}; Java layout comparison skipped`);

let n = 0;
async function setup(spec: TableSpec): Promise<{ io: MemoryFileIO; paths: TablePaths }> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://schema-change-${process.pid}-${++n}/wh`, { fileIO: io });
  await catalog.createTable('db.t', spec);
  return { io, paths: new TablePaths(catalog.tableLocation('db.t')) };
}

const BASIC: TableSpec = {
  fields: [
    { name: 'id', type: 'INT NOT NULL' },
    { name: 'p', type: 'STRING' },
    { name: 'v', type: 'INT' },
    { name: 'f', type: 'FLOAT' },
  ],
  partitionKeys: ['p'],
  options: { 'file.format': 'parquet' },
};

/** The schema file as stored, parsed as plain JSON (what Java would read). */
async function storedJson(io: FileIO, paths: TablePaths, id: number): Promise<JsonObject> {
  return parseJson(new TextDecoder().decode(await io.read(paths.schemaPath(id)))) as JsonObject;
}

function fieldSummary(schema: TableSchema): Array<[number, string, string]> {
  return schema.fields.map((f) => [f.id, f.name, JSON.stringify(f.type)]);
}

async function expectRefused(io: FileIO, paths: TablePaths, changes: SchemaChange[], pattern: RegExp): Promise<SchemaChangeError> {
  const before = await new SchemaManager(io, paths).listIds();
  const err = await alterTable(io, paths, changes).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(SchemaChangeError);
  expect((err as SchemaChangeError).userError).toBe(true);
  expect((err as Error).message).toMatch(pattern);
  // A refused change set writes nothing.
  expect(await new SchemaManager(io, paths).listIds()).toEqual(before);
  return err as SchemaChangeError;
}

describe('alterTable: each change kind', () => {
  it('add column: id = highestFieldId + 1, appended, nullable, description kept; old schema untouched', async () => {
    const { io, paths } = await setup(BASIC);
    const schema0Bytes = await io.read(paths.schemaPath(0));
    const s1 = await alterTable(io, paths, [SchemaChanges.addColumn('x', 'BIGINT', { description: 'new col' })]);
    expect(s1.id).toBe(1);
    expect(s1.highestFieldId).toBe(4);
    const json = await storedJson(io, paths, 1);
    expect(json['id']).toBe(1);
    expect(json['version']).toBe(3);
    expect(json['highestFieldId']).toBe(4);
    const fields = json['fields'] as JsonObject[];
    expect(fields.map((f) => [f['id'], f['name'], f['type']])).toEqual([
      [0, 'id', 'INT NOT NULL'],
      [1, 'p', 'STRING'],
      [2, 'v', 'INT'],
      [3, 'f', 'FLOAT'],
      [4, 'x', 'BIGINT'],
    ]);
    expect(fields[4]!['description']).toBe('new col');
    expect(json['partitionKeys']).toEqual(['p']);
    expect(json['options']).toEqual({ 'file.format': 'parquet' });
    expect(await io.read(paths.schemaPath(0))).toEqual(schema0Bytes);
  });

  it('add column FIRST / AFTER, and nested ROW fields take the ids after the column', async () => {
    const { io, paths } = await setup(BASIC);
    await alterTable(io, paths, [
      SchemaChanges.addColumn('a', 'STRING', { position: { kind: 'first' } }),
      SchemaChanges.addColumn('r', 'ROW<x INT, y ROW<z STRING>>', { position: { kind: 'after', column: 'v' } }),
      SchemaChanges.addColumn('tail', 'DOUBLE'),
    ]);
    const s = await new SchemaManager(io, paths).latest();
    expect(s.fields.map((f) => [f.name, f.id])).toEqual([
      ['a', 4],
      ['id', 0],
      ['p', 1],
      ['v', 2],
      ['r', 5],
      ['f', 3],
      ['tail', 9],
    ]);
    // r = 5, r.x = 6, r.y = 7, r.y.z = 8 (pre-order), then tail = 9.
    const r = s.fields.find((f) => f.name === 'r')!;
    expect(r.type.root).toBe('ROW');
    const rf = r.type.root === 'ROW' ? r.type.fields : [];
    expect(rf.map((f) => [f.name, f.id])).toEqual([
      ['x', 6],
      ['y', 7],
    ]);
    const y = rf[1]!.type;
    expect(y.root === 'ROW' ? y.fields.map((f) => [f.name, f.id]) : []).toEqual([['z', 8]]);
    expect(s.highestFieldId).toBe(9);
  });

  it('drop column: id is gone for good; a re-added column of the same name gets a new id', async () => {
    const { io, paths } = await setup(BASIC);
    await alterTable(io, paths, [SchemaChanges.dropColumn('v')]);
    const s2 = await alterTable(io, paths, [SchemaChanges.addColumn('v', 'INT')]);
    expect(s2.id).toBe(2);
    expect(fieldSummary(s2).map(([id, name]) => [id, name])).toEqual([
      [0, 'id'],
      [1, 'p'],
      [3, 'f'],
      [4, 'v'],
    ]);
    expect(s2.highestFieldId).toBe(4);
    const s1 = await new SchemaManager(io, paths).schema(1);
    expect(s1.fields.map((f) => f.name)).toEqual(['id', 'p', 'f']);
    expect(s1.highestFieldId).toBe(3);
  });

  it('rename column keeps id, type and description; follows bucket-key and fields.<col>.* options', async () => {
    const { io, paths } = await setup({
      fields: [
        { name: 'id', type: 'INT', description: 'the id' },
        { name: 'k', type: 'STRING' },
        { name: 'kk', type: 'STRING' },
      ],
      options: { bucket: '2', 'bucket-key': 'k', 'fields.k.stats-mode': 'full', 'fields.kk.stats-mode': 'none' },
    });
    await alterTable(io, paths, [SchemaChanges.renameColumn('id', 'ident'), SchemaChanges.renameColumn('k', 'key2')]);
    const json = await storedJson(io, paths, 1);
    const fields = json['fields'] as JsonObject[];
    expect(fields.map((f) => [f['id'], f['name'], f['type'], f['description']])).toEqual([
      [0, 'ident', 'INT', 'the id'],
      [1, 'key2', 'STRING', undefined],
      [2, 'kk', 'STRING', undefined],
    ]);
    expect(json['highestFieldId']).toBe(2);
    expect(json['options']).toEqual({
      bucket: '2',
      'bucket-key': 'key2',
      'fields.key2.stats-mode': 'full',
      'fields.kk.stats-mode': 'none',
    });
  });

  it('alter type: every supported widening, nullability kept or relaxed', async () => {
    const { io, paths } = await setup({
      fields: [
        { name: 'i8', type: 'TINYINT' },
        { name: 'i16', type: 'SMALLINT' },
        { name: 'i32', type: 'INT NOT NULL' },
        { name: 'f', type: 'FLOAT' },
        { name: 'dec', type: 'DECIMAL(10, 2)' },
        { name: 'vc', type: 'VARCHAR(5)' },
        { name: 'vc2', type: 'VARCHAR(5)' },
        { name: 'ts', type: 'TIMESTAMP(3)' },
        { name: 'vb', type: 'VARBINARY(4)' },
        { name: 'i32b', type: 'INT NOT NULL' },
      ],
    });
    const s = await alterTable(io, paths, [
      SchemaChanges.alterType('i8', 'INT'),
      SchemaChanges.alterType('i16', 'BIGINT'),
      SchemaChanges.alterType('i32', 'BIGINT NOT NULL'),
      SchemaChanges.alterType('f', 'DOUBLE'),
      SchemaChanges.alterType('dec', 'DECIMAL(20, 2)'),
      SchemaChanges.alterType('vc', 'VARCHAR(10)'),
      SchemaChanges.alterType('vc2', 'STRING'),
      SchemaChanges.alterType('ts', 'TIMESTAMP(6)'),
      SchemaChanges.alterType('vb', 'BYTES'),
      SchemaChanges.alterType('i32b', 'BIGINT NULL'),
    ]);
    const fields = (await storedJson(io, paths, 1))['fields'] as JsonObject[];
    expect(fields.map((f) => [f['id'], f['name'], f['type']])).toEqual([
      [0, 'i8', 'INT'],
      [1, 'i16', 'BIGINT'],
      [2, 'i32', 'BIGINT NOT NULL'],
      [3, 'f', 'DOUBLE'],
      [4, 'dec', 'DECIMAL(20, 2)'],
      [5, 'vc', 'VARCHAR(10)'],
      [6, 'vc2', 'STRING'],
      [7, 'ts', 'TIMESTAMP(6)'],
      [8, 'vb', 'BYTES'],
      [9, 'i32b', 'BIGINT'],
    ]);
    expect(s.highestFieldId).toBe(9);
    // Dropping NOT NULL must be asked for in so many words: a bare type is refused, nothing is written.
    const { io: io3, paths: paths3 } = await setup({ fields: [{ name: 'a', type: 'BIGINT NOT NULL' }] });
    await expect(alterTable(io3, paths3, [SchemaChanges.alterType('a', 'BIGINT')])).rejects.toThrow(
      /column 'a' to BIGINT: the column is NOT NULL .*'BIGINT NOT NULL' to keep the constraint or 'BIGINT NULL' to allow NULLs/,
    );
    expect(await io3.exists(paths3.schemaPath(1))).toBe(false);
    // keepNullability: a NOT NULL column stays NOT NULL when the new type is given without it.
    const { io: io2, paths: paths2 } = await setup({ fields: [{ name: 'a', type: 'INT NOT NULL' }] });
    const k = await alterTable(io2, paths2, [SchemaChanges.alterType('a', 'BIGINT', true)]);
    expect(k.fields[0]!.type).toEqual({ root: 'BIGINT', nullable: false });
  });

  it('set / remove options and update comments', async () => {
    const { io, paths } = await setup({ ...BASIC, options: { 'file.format': 'parquet', 'snapshot.num-retained.min': '5' } });
    await alterTable(io, paths, [
      SchemaChanges.setOption('snapshot.num-retained.max', '20'),
      SchemaChanges.setOption('snapshot.num-retained.min', '3'),
      SchemaChanges.removeOption('file.format'),
      SchemaChanges.removeOption('not-there'),
      SchemaChanges.updateComment('a table'),
      SchemaChanges.updateColumnComment('v', 'value'),
    ]);
    const json = await storedJson(io, paths, 1);
    expect(json['options']).toEqual({ 'snapshot.num-retained.min': '3', 'snapshot.num-retained.max': '20' });
    expect(json['comment']).toBe('a table');
    expect((json['fields'] as JsonObject[])[2]!['description']).toBe('value');
    await alterTable(io, paths, [SchemaChanges.updateComment(null), SchemaChanges.updateColumnComment('v', null)]);
    const json2 = await storedJson(io, paths, 2);
    expect('comment' in json2).toBe(false);
    expect('description' in (json2['fields'] as JsonObject[])[2]!).toBe(false);
  });

  it('bucket and bucket-key may change while the table has no snapshots', async () => {
    const { io, paths } = await setup({ fields: [{ name: 'a', type: 'INT' }] });
    const s = await alterTable(io, paths, [SchemaChanges.setOption('bucket', '4'), SchemaChanges.setOption('bucket-key', 'a')]);
    expect(s.options).toEqual({ bucket: '4', 'bucket-key': 'a' });
  });

  it('applies several changes in order, each seeing the previous ones', async () => {
    const { io, paths } = await setup(BASIC);
    const s = await alterTable(io, paths, [
      SchemaChanges.renameColumn('v', 'w'),
      SchemaChanges.addColumn('v', 'STRING', { position: { kind: 'after', column: 'w' } }),
      SchemaChanges.dropColumn('w'),
    ]);
    expect(s.fields.map((f) => [f.id, f.name])).toEqual([
      [0, 'id'],
      [1, 'p'],
      [4, 'v'],
      [3, 'f'],
    ]);
  });
});

describe('alterTable: refusals (nothing is written)', () => {
  const PK: TableSpec = {
    fields: [
      { name: 'k', type: 'INT' },
      { name: 'p', type: 'STRING' },
      { name: 'v', type: 'INT' },
    ],
    partitionKeys: ['p'],
    primaryKeys: ['k', 'p'],
    options: { bucket: '2' },
  };

  it('add column: NOT NULL, existing name, reserved name, bad type, unknown AFTER column', async () => {
    const { io, paths } = await setup(BASIC);
    const e = await expectRefused(io, paths, [SchemaChanges.addColumn('x', 'INT NOT NULL')], /column 'x'.*must be nullable.*INT NOT NULL/);
    expect(e.subject).toEqual({ column: 'x' });
    await expectRefused(io, paths, [SchemaChanges.addColumn('v', 'INT')], /column 'v' already exists/);
    await expectRefused(io, paths, [SchemaChanges.addColumn('_KEY_x', 'INT')], /'_KEY_x' is reserved/);
    await expectRefused(io, paths, [SchemaChanges.addColumn('_SEQUENCE_NUMBER', 'BIGINT')], /reserved/);
    await expectRefused(io, paths, [SchemaChanges.addColumn('x', 'INTT')], /add column 'x'.*cannot parse type 'INTT'/);
    await expectRefused(
      io,
      paths,
      [SchemaChanges.addColumn('x', 'INT', { position: { kind: 'after', column: 'nope' } })],
      /reference column 'nope'/,
    );
    // A later failing change discards the earlier ones of the same set.
    await expectRefused(
      io,
      paths,
      [SchemaChanges.addColumn('ok', 'INT'), SchemaChanges.dropColumn('nope')],
      /cannot drop column 'nope': no such column/,
    );
  });

  it('drop column: partition key, primary key, bucket key, unknown column, last column', async () => {
    const { io, paths } = await setup(PK);
    await expectRefused(io, paths, [SchemaChanges.dropColumn('p')], /cannot drop column 'p': it is a partition key/);
    await expectRefused(io, paths, [SchemaChanges.dropColumn('k')], /cannot drop column 'k': it is part of the primary key/);
    await expectRefused(io, paths, [SchemaChanges.dropColumn('zz')], /cannot drop column 'zz': no such column/);
    const b = await setup({
      fields: [
        { name: 'a', type: 'INT' },
        { name: 'b', type: 'INT' },
      ],
      options: { bucket: '2', 'bucket-key': 'a' },
    });
    await expectRefused(b.io, b.paths, [SchemaChanges.dropColumn('a')], /cannot drop column 'a': it is a bucket key/);
    const one = await setup({
      fields: [
        { name: 'a', type: 'INT' },
        { name: 'b', type: 'INT' },
      ],
    });
    await expectRefused(
      one.io,
      one.paths,
      [SchemaChanges.dropColumn('a'), SchemaChanges.dropColumn('b')],
      /cannot drop column 'b': a table needs at least one column/,
    );
  });

  it('rename column: partition key, primary key, to an existing name, unknown column', async () => {
    const { io, paths } = await setup(PK);
    await expectRefused(io, paths, [SchemaChanges.renameColumn('p', 'q')], /cannot rename column 'p': it is a partition key/);
    await expectRefused(io, paths, [SchemaChanges.renameColumn('k', 'q')], /cannot rename column 'k': it is part of the primary key/);
    await expectRefused(io, paths, [SchemaChanges.renameColumn('v', 'k')], /rename column 'v' to 'k': column 'k' already exists/);
    await expectRefused(io, paths, [SchemaChanges.renameColumn('nope', 'q')], /cannot rename column 'nope': no such column/);
  });

  it('alter type: changes Paimon has no cast (rule) for name the column and both types', async () => {
    const { io, paths } = await setup({
      fields: [
        { name: 'i', type: 'INT' },
        { name: 'd', type: 'DOUBLE' },
        { name: 'dec', type: 'DECIMAL(10, 2)' },
        { name: 'ts', type: 'TIMESTAMP(6)' },
        { name: 't', type: 'TIME(0)' },
        { name: 'b', type: 'BOOLEAN' },
        { name: 'bin', type: 'BYTES' },
        { name: 'arr', type: 'ARRAY<INT>' },
        { name: 'ms', type: 'MULTISET<INT>' },
        { name: 'p', type: 'INT' },
      ],
      partitionKeys: ['p'],
    });
    const cases: Array<[string, string, RegExp]> = [
      // Not in DataTypeCasts at all.
      ['i', 'DATE', /column 'i' from INT to DATE: Paimon has no cast between these types/],
      ['d', 'BOOLEAN', /column 'd' from DOUBLE to BOOLEAN: Paimon has no cast between these types/],
      ['b', 'TIMESTAMP(3)', /column 'b' from BOOLEAN to TIMESTAMP\(3\): Paimon has no cast between/],
      ['bin', 'INT', /column 'bin' from BYTES to INT: Paimon has no cast between/],
      // Allowed by DataTypeCasts, but CastExecutors.resolve finds no executor.
      ['dec', 'TIMESTAMP(3)', /column 'dec' from DECIMAL\(10, 2\) to TIMESTAMP\(3\): Paimon has no cast rule/],
      ['ts', 'DECIMAL(20, 0)', /column 'ts' from TIMESTAMP\(6\) to DECIMAL\(20, 0\): Paimon has no cast rule/],
      ['ts', 'SMALLINT', /column 'ts' from TIMESTAMP\(6\) to SMALLINT: Paimon has no cast rule/],
      ['t', 'TIME(3)', /column 't' from TIME\(0\) to TIME\(3\): Paimon has no cast rule/],
      ['ms', 'STRING', /column 'ms' from MULTISET<INT> to STRING: Paimon has no cast rule/],
      ['arr', 'ARRAY<BIGINT>', /column 'arr' from ARRAY<INT> to ARRAY<BIGINT>: nested types change only through their fields/],
      ['i', 'BIGINT NOT NULL', /column 'i' from INT to BIGINT NOT NULL: a nullable column cannot become NOT NULL/],
    ];
    for (const [col, type, re] of cases) {
      const e = await expectRefused(io, paths, [SchemaChanges.alterType(col, type)], re);
      expect(e.subject).toEqual({ column: col });
    }
    await expectRefused(io, paths, [SchemaChanges.alterType('p', 'BIGINT')], /change the type of column 'p': it is a partition key/);
    await expectRefused(io, paths, [SchemaChanges.alterType('zz', 'BIGINT')], /no such column/);
  });

  it('alter type of a primary-key column is refused', async () => {
    const { io, paths } = await setup(PK);
    await expectRefused(io, paths, [SchemaChanges.alterType('k', 'BIGINT')], /column 'k': it is part of the primary key/);
  });

  it('options: primary-key / partition always; bucket, bucket-key, merge-engine once the table has snapshots', async () => {
    const { io, paths } = await setup({
      fields: [
        { name: 'a', type: 'INT' },
        { name: 'b', type: 'INT' },
      ],
      options: { bucket: '2', 'bucket-key': 'a' },
    });
    const e = await expectRefused(io, paths, [SchemaChanges.setOption('primary-key', 'a')], /option 'primary-key'/);
    expect(e.subject).toEqual({ option: 'primary-key' });
    await expectRefused(io, paths, [SchemaChanges.setOption('partition', 'a')], /option 'partition'/);
    await expectRefused(io, paths, [SchemaChanges.removeOption('partition')], /option 'partition'/);
    // Invalid option combinations are refused even on an empty table.
    await expectRefused(io, paths, [SchemaChanges.setOption('bucket-key', 'zz')], /bucket-key.*'zz'/);
    await expectRefused(io, paths, [SchemaChanges.setOption('bucket', 'x')], /'bucket'.*'x'/);

    await writeSnapshots(io, paths, [1], { latest: '1' });
    await expectRefused(io, paths, [SchemaChanges.setOption('bucket', '4')], /cannot change option 'bucket' from '2' to '4'.*snapshots/);
    await expectRefused(io, paths, [SchemaChanges.removeOption('bucket')], /cannot remove option 'bucket'/);
    await expectRefused(io, paths, [SchemaChanges.setOption('bucket-key', 'b')], /option 'bucket-key'/);
    await expectRefused(
      io,
      paths,
      [SchemaChanges.setOption('merge-engine', 'first-row')],
      /cannot change option 'merge-engine' from its default/,
    );
    // Setting an immutable option to its current value and mutable options stay allowed.
    const s = await alterTable(io, paths, [
      SchemaChanges.setOption('bucket', '2'),
      SchemaChanges.setOption('snapshot.num-retained.min', '2'),
    ]);
    expect(s.options).toEqual({ bucket: '2', 'bucket-key': 'a', 'snapshot.num-retained.min': '2' });
  });

  it('deletion-vectors.enabled changes once the table has snapshots only with deletion-vectors.modifiable (as Paimon)', async () => {
    const pk = await setup(PK);
    // An empty table may switch freely: no record exists that could read twice.
    await alterTable(pk.io, pk.paths, [SchemaChanges.setOption('deletion-vectors.enabled', 'true')]);
    await alterTable(pk.io, pk.paths, [SchemaChanges.removeOption('deletion-vectors.enabled')]);
    await writeSnapshots(pk.io, pk.paths, [1], { latest: '1' });
    const e = await expectRefused(
      pk.io,
      pk.paths,
      [SchemaChanges.setOption('deletion-vectors.enabled', 'true')],
      /cannot change option 'deletion-vectors.enabled' from false to true.*duplicates.*compact --full.*'deletion-vectors.modifiable' = 'true'/,
    );
    expect(e.subject).toEqual({ option: 'deletion-vectors.enabled' });
    // Same value, or opting in (in the same change list too), is allowed.
    await alterTable(pk.io, pk.paths, [SchemaChanges.setOption('deletion-vectors.enabled', 'false')]);
    const on = await alterTable(pk.io, pk.paths, [
      SchemaChanges.setOption('deletion-vectors.modifiable', 'true'),
      SchemaChanges.setOption('deletion-vectors.enabled', 'true'),
    ]);
    expect(on.options['deletion-vectors.enabled']).toBe('true');

    // Append tables: turning deletion vectors on is safe, turning them off would resurrect deleted rows.
    const append = await setup({ fields: [{ name: 'a', type: 'INT' }], options: {} });
    await writeSnapshots(append.io, append.paths, [1], { latest: '1' });
    await alterTable(append.io, append.paths, [SchemaChanges.setOption('deletion-vectors.enabled', 'true')]);
    await expectRefused(
      append.io,
      append.paths,
      [SchemaChanges.removeOption('deletion-vectors.enabled')],
      /'deletion-vectors.enabled' from true to false.*rows its deletion vectors delete would reappear/,
    );
    await expectRefused(append.io, append.paths, [SchemaChanges.setOption('deletion-vectors.enabled', 'false')], /would reappear/);
  });

  it('an empty change list and a missing table are refused', async () => {
    const { io, paths } = await setup(BASIC);
    await expectRefused(io, paths, [], /no schema changes/);
    const missing = new TablePaths('memory://nowhere/db.db/t');
    await expect(alterTable(io, missing, [SchemaChanges.dropColumn('v')])).rejects.toThrow(/no table at/);
  });
});

/** A FileIO whose first create-if-absent of a schema file lets `competitor` run first. */
function racing(io: MemoryFileIO, competitor: () => Promise<unknown>, times = 1): FileIO {
  let left = times;
  return new Proxy(io, {
    get(target, prop) {
      if (prop === 'createIfAbsent') {
        return async (path: string, data: Uint8Array | string) => {
          if (left > 0 && path.includes('/schema/schema-')) {
            left--;
            await competitor();
          }
          return target.createIfAbsent(path, data);
        };
      }
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

describe('alterTable: concurrent changes', () => {
  it('losing the race to schema-1 re-reads schema-1 and writes schema-2 with both changes', async () => {
    const { io, paths } = await setup(BASIC);
    const io2 = racing(io, () => alterTable(io, paths, [SchemaChanges.addColumn('theirs', 'INT')]));
    const mine = await alterTable(io2, paths, [SchemaChanges.addColumn('mine', 'STRING'), SchemaChanges.renameColumn('v', 'w')]);
    expect(mine.id).toBe(2);
    const m = new SchemaManager(io, paths);
    expect(await m.listIds()).toEqual([0, 1, 2]);
    const s1 = await m.schema(1);
    expect(s1.fields.map((f) => [f.id, f.name])).toEqual([
      [0, 'id'],
      [1, 'p'],
      [2, 'v'],
      [3, 'f'],
      [4, 'theirs'],
    ]);
    const s2 = await m.schema(2);
    expect(s2.fields.map((f) => [f.id, f.name])).toEqual([
      [0, 'id'],
      [1, 'p'],
      [2, 'w'],
      [3, 'f'],
      [4, 'theirs'],
      [5, 'mine'],
    ]);
    expect(s2.highestFieldId).toBe(5);
    // The winner's file is not overwritten by the loser.
    expect(serializeSchema(s1)).toBe(new TextDecoder().decode(await io.read(paths.schemaPath(1))));
  });

  it('fails clearly when the changes no longer apply after the race', async () => {
    const { io, paths } = await setup(BASIC);
    const io2 = racing(io, () => alterTable(io, paths, [SchemaChanges.dropColumn('v')]));
    await expect(alterTable(io2, paths, [SchemaChanges.renameColumn('v', 'w')])).rejects.toThrow(
      /cannot rename column 'v': no such column/,
    );
    expect(await new SchemaManager(io, paths).listIds()).toEqual([0, 1]);
  });

  it('gives up after maxRetries lost races', async () => {
    const { io, paths } = await setup(BASIC);
    let k = 0;
    const io2 = racing(io, () => alterTable(io, paths, [SchemaChanges.addColumn(`c${k++}`, 'INT')]), 3);
    await expect(alterTable(io2, paths, [SchemaChanges.addColumn('mine', 'INT')], { maxRetries: 2 })).rejects.toThrow(
      /created concurrently 3 times; giving up/,
    );
    expect(await new SchemaManager(io, paths).listIds()).toEqual([0, 1, 2, 3]);
  });

  it('many concurrent alters: contiguous schema ids, every column once, unique field ids', async () => {
    const { io, paths } = await setup(BASIC);
    const N = 8;
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) => alterTable(io, paths, [SchemaChanges.addColumn(`c${i}`, 'INT')])),
    );
    expect(results.map((s) => s.id).sort((a, b) => a - b)).toEqual(Array.from({ length: N }, (_, i) => i + 1));
    const latest = await new SchemaManager(io, paths).latest();
    expect(latest.id).toBe(N);
    expect(
      latest.fields
        .map((f) => f.name)
        .filter((x) => x.startsWith('c'))
        .sort(),
    ).toEqual(Array.from({ length: N }, (_, i) => `c${i}`).sort());
    const ids = latest.fields.map((f) => f.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(latest.highestFieldId).toBe(3 + N);
  });
});

describe.skipIf(!haveFixtures)('alterTable reproduces Java Paimon schema files', () => {
  it('append_table_with_alter_table: schema-1 from schema-0 (drops, renames, add with description, move)', async () => {
    const io = new MemoryFileIO();
    const paths = new TablePaths(`memory://schema-change-fixture-${process.pid}/wh/default.db/t`);
    const java0 = readFileSync(join(EVOLVED, 'schema-0'), 'utf8');
    const java1 = readFileSync(join(EVOLVED, 'schema-1'), 'utf8');
    await io.write(paths.schemaPath(0), java0);
    const s1 = await alterTable(io, paths, [
      SchemaChanges.dropColumn('a'),
      SchemaChanges.dropColumn('c'),
      SchemaChanges.renameColumn('b', 'c'),
      SchemaChanges.renameColumn('d', 'a'),
      SchemaChanges.addColumn('d', 'INT', { description: '', position: { kind: 'after', column: 'c' } }),
      SchemaChanges.moveColumn('k', { kind: 'after', column: 'key1' }),
      SchemaChanges.addColumn('e', 'INT'),
    ]);
    const javaSchema = parseSchema(java1, 'schema-1');
    // Byte-identical apart from the creation time.
    const ours = new TextDecoder().decode(await io.read(paths.schemaPath(1)));
    expect(ours).toBe(serializeSchema({ ...javaSchema, timeMillis: s1.timeMillis }));
    expect(ours.replace(/"timeMillis" : \d+/, '')).toBe(java1.replace(/"timeMillis" : \d+/, '').trimEnd());
  });
});
