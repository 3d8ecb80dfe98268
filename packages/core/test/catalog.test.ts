import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryFileIO } from '@tidemark/storage';
import { parseJson, parseSchema, type JsonObject } from '@tidemark/format';
import {
  FileSystemCatalog,
  SchemaValidationError,
  TableAlreadyExistsError,
  DatabaseNotEmptyError,
  tableOptions,
  parseMemorySize,
  parseDuration,
  TableNotFoundError,
  WarehouseNotFoundError,
} from '../src/index.js';

const FIXTURES = join(__dirname, '../../../../shared/fixtures/paimon');
const haveFixtures = existsSync(FIXTURES);
if (!haveFixtures) console.warn(`[catalog.test] fixtures not found at ${FIXTURES}; fixture comparison skipped`);

let n = 0;
const memWarehouse = (): string => `memory://catalog-test-${process.pid}-${++n}/wh`;

describe('FileSystemCatalog on an object store (memory)', () => {
  it('creates schema-0 exactly like Paimon: ids, highestFieldId, PK NOT NULL, version 3, only given options', async () => {
    const catalog = new FileSystemCatalog(memWarehouse(), { fileIO: new MemoryFileIO() });
    const before = Date.now();
    await catalog.createTable('db.t', {
      fields: [
        { name: 'f0', type: 'STRING' },
        { name: 'f1', type: 'INT' },
        { name: 'f2', type: 'INT' },
        { name: 'f3', type: 'DOUBLE' },
      ],
      partitionKeys: ['f1'],
      primaryKeys: ['f0', 'f1', 'f2'],
      options: { bucket: '2', 'bucket-key': 'f2', 'file.format': 'parquet' },
    });
    const text = new TextDecoder().decode(await catalog.fileIO.read(catalog.tableLocation('db.t') + '/schema/schema-0'));
    const json = parseJson(text) as JsonObject;
    expect(Object.keys(json)).toEqual([
      'version',
      'id',
      'fields',
      'highestFieldId',
      'partitionKeys',
      'primaryKeys',
      'options',
      'timeMillis',
    ]);
    expect(json['version']).toBe(3);
    expect(json['highestFieldId']).toBe(3);
    expect(json['fields']).toEqual([
      { id: 0, name: 'f0', type: 'STRING NOT NULL' },
      { id: 1, name: 'f1', type: 'INT NOT NULL' },
      { id: 2, name: 'f2', type: 'INT NOT NULL' },
      { id: 3, name: 'f3', type: 'DOUBLE' },
    ]);
    expect(json['options']).toEqual({ bucket: '2', 'bucket-key': 'f2', 'file.format': 'parquet' });
    expect(json['timeMillis']).toBeGreaterThanOrEqual(before);
    expect(text).toContain('"primaryKeys" : [ "f0", "f1", "f2" ]');
  });

  it.skipIf(!haveFixtures)('has the same shape as the Java-written fixture schema (pk-mor)', async () => {
    const fixturePath = join(FIXTURES, 'pk-mor/default.db/pk_table_scan_and_read_mor/schema/schema-0');
    const fixtureText = readFileSync(fixturePath, 'utf8');
    const fixture = parseSchema(fixtureText, fixturePath);
    const catalog = new FileSystemCatalog(memWarehouse(), { fileIO: new MemoryFileIO() });
    // Same definition as the Java table, with nullable types: the catalog must force PK NOT NULL.
    await catalog.createTable('default.pk', {
      fields: fixture.fields.map((f) => ({ name: f.name, type: { ...f.type, nullable: true } })),
      partitionKeys: fixture.partitionKeys,
      primaryKeys: fixture.primaryKeys,
      options: fixture.options,
    });
    const ours = new TextDecoder().decode(await catalog.fileIO.read(catalog.tableLocation('default.pk') + '/schema/schema-0'));
    const strip = (s: string): string => s.replace(/"timeMillis" : \d+/, '"timeMillis" : 0');
    expect(strip(ours)).toBe(strip(fixtureText));
  });

  it('assigns nested ROW field ids after their column, like Java', async () => {
    const catalog = new FileSystemCatalog(memWarehouse(), { fileIO: new MemoryFileIO() });
    const schema = await catalog.createTable('db.nested', {
      fields: [
        { name: 'a', type: 'INT' },
        { name: 'r', type: 'ROW<x INT, y ROW<z STRING>>' },
        { name: 'b', type: 'BIGINT' },
      ],
    });
    expect(schema.fields.map((f) => f.id)).toEqual([0, 1, 5]);
    const r = schema.fields[1]!.type;
    expect(r.root === 'ROW' && r.fields.map((f) => f.id)).toEqual([2, 3]);
    expect(schema.highestFieldId).toBe(5);
  });

  it('lists, drops and refuses duplicates', async () => {
    const catalog = new FileSystemCatalog(memWarehouse(), { fileIO: new MemoryFileIO() });
    await catalog.createDatabase('empty'); // records nothing on object stores
    await catalog.createTable('db1.a', { fields: [{ name: 'x', type: 'INT' }] });
    await catalog.createTable('db1.b', { fields: [{ name: 'x', type: 'INT' }] });
    await catalog.createTable('db2.c', { fields: [{ name: 'x', type: 'INT' }] });
    expect(await catalog.listDatabases()).toEqual(['db1', 'db2']);
    expect(await catalog.listTables('db1')).toEqual(['a', 'b']);
    await expect(catalog.createTable('db1.a', { fields: [{ name: 'x', type: 'INT' }] })).rejects.toBeInstanceOf(TableAlreadyExistsError);
    await catalog.createTable('db1.a', { fields: [{ name: 'y', type: 'INT' }] }, { ignoreIfExists: true });
    expect((await catalog.getTable('db1.a')).schema().fields[0]!.name).toBe('x');
    await expect(catalog.dropDatabase('db1')).rejects.toBeInstanceOf(DatabaseNotEmptyError);
    await catalog.dropTable('db1.a');
    expect(await catalog.listTables('db1')).toEqual(['b']);
    await expect(catalog.getTable('db1.a')).rejects.toBeInstanceOf(TableNotFoundError);
    await catalog.dropDatabase('db1', { cascade: true });
    expect(await catalog.listDatabases()).toEqual(['db2']);
  });

  it('validates definitions with errors naming the column / key / option', async () => {
    const catalog = new FileSystemCatalog(memWarehouse(), { fileIO: new MemoryFileIO() });
    const bad = async (spec: Parameters<FileSystemCatalog['createTable']>[1], msg: RegExp): Promise<void> => {
      const p = catalog.createTable('db.bad', spec);
      await expect(p).rejects.toBeInstanceOf(SchemaValidationError);
      await expect(catalog.createTable('db.bad', spec)).rejects.toThrow(msg);
    };
    await bad({ fields: [{ name: 'a', type: 'INTT' }] }, /column 'a'.*unknown type 'INTT'/);
    await bad({ fields: [{ name: 'a', type: 'INT' }], partitionKeys: ['p'] }, /partition key 'p' is not a column/);
    await bad({ fields: [{ name: 'a', type: 'INT' }], primaryKeys: ['k'] }, /primary key 'k' is not a column/);
    await bad({ fields: [{ name: 'a', type: 'INT' }], options: { bucket: '4' } }, /needs option 'bucket-key'/);
    await bad({ fields: [{ name: 'a', type: 'INT' }], options: { bucket: '4', 'bucket-key': 'zz' } }, /unknown column 'zz'/);
    await bad({ fields: [{ name: 'a', type: 'INT' }], options: { 'target-file-size': 'big' } }, /target-file-size/);
    const pk = { fields: [{ name: 'k', type: 'INT NOT NULL' }], primaryKeys: ['k'] };
    const dv = { 'deletion-vectors.enabled': 'true', bucket: '1' };
    await bad(
      { ...pk, options: { ...dv, 'changelog-producer': 'full-compaction' } },
      /'changelog-producer' = 'full-compaction' cannot be .*use 'lookup'/,
    );
    await bad({ ...pk, options: { ...dv, 'merge-engine': 'first-row' } }, /'merge-engine' = 'first-row' cannot be combined/);
    for (const producer of ['none', 'input', 'lookup']) {
      await catalog.createTable(`db.dv_${producer}`, { ...pk, options: { ...dv, 'changelog-producer': producer } });
    }
    expect(await catalog.tableExists('db.bad')).toBe(false);
  });
});

describe('FileSystemCatalog on local disk', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('makes database directories, lists and drops them', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tidemark-catalog-'));
    dirs.push(dir);
    const catalog = new FileSystemCatalog(dir);
    await catalog.createDatabase('sales');
    expect(await catalog.listDatabases()).toEqual(['sales']);
    await catalog.createTable('sales.orders', { fields: [{ name: 'id', type: 'BIGINT NOT NULL' }], partitionKeys: [] });
    expect(readdirSync(join(dir, 'sales.db', 'orders', 'schema'))).toEqual(['schema-0']);
    expect(await catalog.listTables('sales')).toEqual(['orders']);
    await catalog.dropTable('sales.orders');
    expect(existsSync(join(dir, 'sales.db', 'orders'))).toBe(false);
    await catalog.dropDatabase('sales');
    expect(await catalog.listDatabases()).toEqual([]);
    await catalog.close();
  });

  it('refuses to list a local warehouse directory that does not exist', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tidemark-catalog-'));
    dirs.push(dir);
    const catalog = new FileSystemCatalog(join(dir, 'typo'));
    await expect(catalog.listDatabases()).rejects.toThrow(WarehouseNotFoundError);
    await expect(catalog.listDatabases()).rejects.toThrow(`warehouse ${join(dir, 'typo')} does not exist`);
    await catalog.close();
  });
});

describe('tableOptions', () => {
  it("applies Paimon's defaults", () => {
    const append = tableOptions({ options: {}, primaryKeys: [] });
    expect(append.bucket).toBe(-1);
    expect(append.fileFormat).toBe('parquet');
    expect(append.fileCompression).toBe('zstd');
    expect(append.targetFileSize).toBe(256 * 1024 * 1024);
    expect(tableOptions({ options: {}, primaryKeys: ['k'] }).targetFileSize).toBe(128 * 1024 * 1024);
    expect(append.manifestTargetFileSize).toBe(8 * 1024 * 1024);
    expect(append.manifestMergeMinCount).toBe(30);
    expect(append.manifestFullCompactionThresholdSize).toBe(16 * 1024 * 1024);
    expect(append.statsMode).toEqual({ kind: 'truncate', length: 16 });
    expect(append.snapshotNumRetainedMin).toBe(10);
    expect(append.snapshotNumRetainedMax).toBe(2147483647);
    expect(append.snapshotTimeRetainedMs).toBe(3_600_000);
    expect(append.snapshotExpireLimit).toBe(50);
    expect(append.commitMaxRetries).toBe(10);
    expect(append.commitTimeoutMs).toBeNull();
    expect(append.commitMinRetryWaitMs).toBe(10);
    expect(append.commitMaxRetryWaitMs).toBe(10_000);
    expect(append.dynamicPartitionOverwrite).toBe(true);
    expect(append.partitionDefaultName).toBe('__DEFAULT_PARTITION__');
    expect(append.partitionLegacyName).toBe(true);
    expect(append.compactionMinFileNum).toBe(5);
    const o = tableOptions({
      options: { 'metadata.stats-mode': 'full', 'fields.a.stats-mode': 'none', 'commit.timeout': '30 s' },
      primaryKeys: [],
    });
    expect(o.statsModeOf('a')).toEqual({ kind: 'none' });
    expect(o.statsModeOf('b')).toEqual({ kind: 'full' });
    expect(o.commitTimeoutMs).toBe(30_000);
  });

  it('parses sizes and durations', () => {
    expect(parseMemorySize('128 mb')).toBe(128 * 1024 * 1024);
    expect(parseMemorySize('8kb')).toBe(8192);
    expect(parseMemorySize('1024')).toBe(1024);
    expect(parseDuration('1 h')).toBe(3_600_000);
    expect(parseDuration('10 ms')).toBe(10);
    expect(() => parseMemorySize('lots')).toThrow(/size/);
  });
});
