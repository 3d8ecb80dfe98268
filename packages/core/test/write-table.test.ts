import * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { MemoryFileIO, type FileIO } from '@tidemark/storage';
import {
  bucketOfValues,
  conformToPaimonTypes,
  deserializeBinaryRow,
  partitionPath,
  readParquetFile,
  readParquetFooter,
  type TableSchema,
} from '@tidemark/format';
import { FileSystemCatalog, NotSupportedError, TableWrite, WriteValidationError, type TableSpec } from '../src/index.js';

let n = 0;
async function setup(spec: TableSpec): Promise<{ io: FileIO; location: string; schema: TableSchema }> {
  const io = new MemoryFileIO();
  const catalog = new FileSystemCatalog(`memory://write-test-${process.pid}-${++n}/wh`, { fileIO: io });
  const schema = await catalog.createTable('db.t', spec);
  return { io, location: catalog.tableLocation('db.t'), schema };
}

async function dataFiles(io: FileIO, location: string): Promise<string[]> {
  const out: string[] = [];
  for await (const st of io.list(location)) if (st.path.endsWith('.parquet')) out.push(st.path);
  return out.sort();
}

async function readRows(io: FileIO, path: string, schema: TableSchema): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  for await (const b of readParquetFile(io, path)) {
    const batch = conformToPaimonTypes(b, schema.fields);
    for (let i = 0; i < batch.numRows; i++) {
      const row: Record<string, unknown> = {};
      batch.schema.fields.forEach((f, c) => {
        const vec = batch.getChildAt(c)!;
        // Raw epoch values for timestamps: Vector.get() turns them into (fractional) millis.
        row[f.name] = arrow.DataType.isTimestamp(f.type) && vec.isValid(i) ? (vec.data[0]!.values as BigInt64Array)[i] : vec.get(i);
      });
      rows.push(row);
    }
  }
  return rows;
}

const ALL_TYPES: TableSpec = {
  fields: [
    { name: 'b', type: 'BOOLEAN' },
    { name: 'i8', type: 'TINYINT' },
    { name: 'i16', type: 'SMALLINT' },
    { name: 'i32', type: 'INT NOT NULL' },
    { name: 'i64', type: 'BIGINT' },
    { name: 'f32', type: 'FLOAT' },
    { name: 'f64', type: 'DOUBLE' },
    { name: 'dec', type: 'DECIMAL(10, 2)' },
    { name: 'bigdec', type: 'DECIMAL(38, 5)' },
    { name: 's', type: 'STRING' },
    { name: 'bin', type: 'BYTES' },
    { name: 'd', type: 'DATE' },
    { name: 't', type: 'TIME(3)' },
    { name: 'ts3', type: 'TIMESTAMP(3)' },
    { name: 'ts6', type: 'TIMESTAMP(6)' },
    { name: 'ts9', type: 'TIMESTAMP(9)' },
    { name: 'ltz', type: 'TIMESTAMP(6) WITH LOCAL TIME ZONE' },
    { name: 'arr', type: 'ARRAY<INT>' },
    { name: 'm', type: 'MAP<STRING, BIGINT>' },
    { name: 'r', type: 'ROW<x INT, y STRING>' },
  ],
};

const LONG = 'Two roads diverged in a yellow wood';

describe('TableWrite: every type', () => {
  it('writes rows, reads them back, and records stats and metadata', async () => {
    const { io, location, schema } = await setup(ALL_TYPES);
    const w = new TableWrite(io, location, schema);
    await w.write([
      {
        b: true,
        i8: -128,
        i16: 32767,
        i32: -2147483648,
        i64: -(2n ** 63n),
        f32: 1.5,
        f64: -1e308,
        dec: '12345678.99',
        bigdec: '-123456789012345678901234567890123.45678',
        s: LONG,
        bin: new Uint8Array([0, 255]),
        d: '1900-01-01',
        t: '23:59:59.999',
        ts3: '1969-12-31 23:59:59.999',
        ts6: '1960-06-15T12:00:00.123456',
        ts9: { millis: -1, nanoOfMillis: 999_999 },
        ltz: '2024-01-01T10:00:00+02:00',
        arr: [1, null, 3],
        m: new Map([['k', 5n]]),
        r: { x: 1, y: 'a' },
      },
      { i32: 7 },
      {
        b: false,
        i8: 127,
        i16: -32768,
        i32: 2147483647,
        i64: 2n ** 63n - 1n,
        f32: -2.25,
        f64: 1e308,
        dec: -0.05,
        bigdec: 1n,
        s: 'Apple',
        bin: new Uint8Array([1]),
        d: new Date(Date.UTC(2024, 0, 1)),
        t: 0,
        ts3: new Date(Date.UTC(2024, 0, 1)),
        ts6: 0,
        ts9: '2262-04-11 23:47:16.854775807',
        ltz: 0n,
        arr: [],
        m: { z: null },
        r: [null, null],
      },
    ]);
    const files = await dataFiles(io, location);
    expect(files).toEqual([]); // nothing written before prepareCommit
    const msgs = await w.prepareCommit();
    expect(msgs).toHaveLength(1);
    const msg = msgs[0]!;
    expect(msg.bucket).toBe(0);
    expect(msg.totalBuckets).toBe(-1);
    expect(deserializeBinaryRow(msg.partition, [])).toEqual([]);
    const [file] = msg.newFiles;
    expect(file!.fileName).toMatch(/^data-[0-9a-f-]{36}-0\.parquet$/);
    expect(file!.rowCount).toBe(3);
    expect(file!.minSequenceNumber).toBe(0n);
    expect(file!.maxSequenceNumber).toBe(2n);
    expect(file!.level).toBe(0);
    expect(file!.fileSource).toBe(0);
    expect(file!.schemaId).toBe(0);
    expect(file!.valueStatsCols).toBeNull();
    const path = `${location}/bucket-0/${file!.fileName}`;
    expect(await dataFiles(io, location)).toEqual([path]);
    expect(file!.fileSize).toBe((await io.stat(path)).size);

    const footer = await readParquetFooter(io, path);
    expect([...footer.topLevelFieldIds.entries()].slice(0, 4)).toEqual([
      ['b', 0],
      ['i8', 1],
      ['i16', 2],
      ['i32', 3],
    ]);
    expect(footer.rowGroups[0]!.columns[0]!.column.element.repetition_type).toBe('OPTIONAL');
    expect(footer.rowGroups[0]!.columns[3]!.column.element.repetition_type).toBe('REQUIRED');
    expect(footer.metadata.row_groups[0]!.columns[0]!.meta_data!.codec).toBe('ZSTD');

    const rows = await readRows(io, path, schema);
    expect(rows[0]!['i64']).toBe(-(2n ** 63n));
    expect(rows[2]!['i64']).toBe(2n ** 63n - 1n);
    expect(rows[0]!['s']).toBe(LONG);
    expect(rows[0]!['f64']).toBe(-1e308);
    expect(rows[0]!['d']).toBe(Date.UTC(1900, 0, 1));
    expect(rows[0]!['t']).toBe(86_399_999);
    expect(rows[0]!['ts3']).toBe(-1n);
    expect(rows[0]!['ts6']).toBe(BigInt(Date.UTC(1960, 5, 15, 12, 0, 0, 123)) * 1000n + 456n);
    expect(rows[0]!['ts9']).toBe(-1n);
    expect(rows[2]!['ts9']).toBe(9223372036854775807n);
    expect(rows[0]!['ltz']).toBe(BigInt(Date.UTC(2024, 0, 1, 8)) * 1000n);
    expect(rows[2]!['ltz']).toBe(0n);
    expect([...(rows[0]!['arr'] as arrow.Vector)]).toEqual([1, null, 3]);
    expect(String(rows[0]!['r'])).toContain('"x": 1');
    expect(rows[1]!['s']).toBeNull();
    expect(rows[1]!['i32']).toBe(7);

    const types = schema.fields.map((f) => f.type);
    const min = deserializeBinaryRow(file!.valueStats.minValues, types);
    const max = deserializeBinaryRow(file!.valueStats.maxValues, types);
    const col = (name: string): number => schema.fields.findIndex((f) => f.name === name);
    expect(file!.valueStats.nullCounts).toEqual([1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
    expect([min[col('b')], max[col('b')]]).toEqual([false, true]);
    expect([min[col('i32')], max[col('i32')]]).toEqual([-2147483648, 2147483647]);
    expect([min[col('i64')], max[col('i64')]]).toEqual([-(2n ** 63n), 2n ** 63n - 1n]);
    expect([min[col('dec')], max[col('dec')]]).toEqual([
      { unscaled: -5n, scale: 2 },
      { unscaled: 1234567899n, scale: 2 },
    ]);
    expect(min[col('bigdec')]).toEqual({ unscaled: -12345678901234567890123456789012345678n, scale: 5 });
    // truncate(16): min = first 16 code points, max = first 16 with the last incremented.
    expect(min[col('s')]).toBe('Apple');
    expect(max[col('s')]).toBe('Two roads diverh');
    expect([min[col('d')], max[col('d')]]).toEqual([-25567, 19723]);
    expect(min[col('ts3')]).toEqual({ millis: -1, nanoOfMillis: 0 });
    expect(min[col('ts6')]).toEqual({ millis: Date.UTC(1960, 5, 15, 12, 0, 0, 123), nanoOfMillis: 456_000 });
    expect(min[col('ts9')]).toEqual({ millis: -1, nanoOfMillis: 999_999 });
    expect([min[col('arr')], max[col('m')], min[col('r')]]).toEqual([null, null, null]);
  });

  it('honours metadata.stats-mode full / counts / none', async () => {
    const { io, location, schema } = await setup({
      fields: [
        { name: 'a', type: 'STRING' },
        { name: 'b', type: 'INT' },
        { name: 'c', type: 'INT' },
      ],
      options: { 'metadata.stats-mode': 'full', 'fields.b.stats-mode': 'counts', 'fields.c.stats-mode': 'none' },
    });
    const w = new TableWrite(io, location, schema);
    await w.write([
      { a: LONG, b: 1, c: 2 },
      { a: null, b: null, c: 3 },
    ]);
    const [file] = (await w.prepareCommit())[0]!.newFiles;
    expect(file!.valueStatsCols).toEqual(['a', 'b']);
    const types = schema.fields.slice(0, 2).map((f) => f.type);
    expect(deserializeBinaryRow(file!.valueStats.minValues, types)).toEqual([LONG, null]);
    expect(deserializeBinaryRow(file!.valueStats.maxValues, types)).toEqual([LONG, null]);
    expect(file!.valueStats.nullCounts).toEqual([1, 1]);
  });
});

describe('TableWrite: validation', () => {
  it('rejects bad input naming column and row, and writes nothing', async () => {
    const { io, location, schema } = await setup({
      fields: [
        { name: 'id', type: 'BIGINT NOT NULL' },
        { name: 'n', type: 'TINYINT' },
        { name: 'v', type: 'VARCHAR(3)' },
      ],
    });
    const w = new TableWrite(io, location, schema);
    await expect(w.write([{ id: 1n }, { id: 2n, nope: 1 }])).rejects.toThrow(/column 'nope', row 1: unknown column/);
    await expect(w.write([{ id: 1n }, { id: null }])).rejects.toThrow(/column 'id', row 1: NULL in a NOT NULL column/);
    await expect(w.write([{ id: 1n, n: 128 }])).rejects.toThrow(/column 'n', row 0: expected TINYINT/);
    await expect(w.write([{ id: 1n, v: 'abcd' }])).rejects.toThrow(/column 'v', row 0: .*longer than 3/);
    await expect(w.write([{ id: 'x' }])).rejects.toBeInstanceOf(WriteValidationError);
    const batch = arrow.tableFromArrays({ id: BigInt64Array.from([1n]), extra: Int32Array.from([1]) });
    await expect(w.write(batch)).rejects.toThrow(/column 'extra': unknown column/);
    expect(await w.prepareCommit()).toEqual([]);
    expect(await dataFiles(io, location)).toEqual([]);
  });

  it('refuses bucket-key with dynamic buckets, postpone buckets and cross-partition keys', async () => {
    // Dynamic buckets (the default) get the hash-index assigner; 'bucket-key' does not apply to them (Java refuses it too).
    const { io, location, schema } = await setup({ fields: [{ name: 'k', type: 'INT' }], primaryKeys: ['k'] });
    expect(() => new TableWrite(io, location, schema)).not.toThrow();
    const keyed = await setup({ fields: [{ name: 'k', type: 'INT' }], primaryKeys: ['k'], options: { 'bucket-key': 'k' } });
    expect(() => new TableWrite(keyed.io, keyed.location, keyed.schema)).toThrow(NotSupportedError);
    expect(() => new TableWrite(keyed.io, keyed.location, keyed.schema)).toThrow(/'bucket-key' = 'k' cannot be used with 'bucket' = -1/);
    const postpone = await setup({ fields: [{ name: 'k', type: 'INT' }], primaryKeys: ['k'], options: { bucket: '-2' } });
    expect(() => new TableWrite(postpone.io, postpone.location, postpone.schema)).toThrow(/'bucket' = -2/);
    const cross = await setup({
      fields: [
        { name: 'k', type: 'INT' },
        { name: 'p', type: 'INT' },
      ],
      primaryKeys: ['k', 'p'],
      partitionKeys: ['p'],
      options: { bucket: '2' },
    });
    // create refuses such a key; a table Java wrote (cross-partition upserts) can still have one.
    const javaSchema = { ...cross.schema, primaryKeys: ['k'] };
    expect(() => new TableWrite(cross.io, cross.location, javaSchema)).toThrow(/cross-partition updates.*partition key\(s\) p/);
  });
});

describe('TableWrite: placement and rolling', () => {
  it('puts rows into partition directories and fixed buckets as bucketOfValues says', async () => {
    const { io, location, schema } = await setup({
      fields: [
        { name: 'dt', type: 'STRING' },
        { name: 'k', type: 'INT' },
        { name: 'v', type: 'STRING' },
      ],
      partitionKeys: ['dt'],
      options: { bucket: '3', 'bucket-key': 'k' },
    });
    const w = new TableWrite(io, location, schema);
    const rows = [];
    for (let i = 0; i < 60; i++) rows.push({ dt: i % 2 ? '2024-01-01' : null, k: i, v: `v${i}` });
    await w.write(rows);
    const msgs = await w.prepareCommit();
    const intType = schema.fields[1]!.type;
    let total = 0;
    for (const m of msgs) {
      expect(m.totalBuckets).toBe(3);
      const [dt] = deserializeBinaryRow(m.partition, [schema.fields[0]!.type]);
      const dir = partitionPath(['dt'], [schema.fields[0]!.type], [dt ?? null]);
      for (const f of m.newFiles) {
        const got = await readRows(io, `${location}/${dir}bucket-${m.bucket}/${f.fileName}`, schema);
        for (const r of got) {
          expect(r['dt']).toBe(dt);
          expect(bucketOfValues([intType], [r['k'] as number], 3)).toBe(m.bucket);
        }
        total += got.length;
      }
    }
    expect(total).toBe(60);
    expect(new Set(msgs.map((m) => m.bucket)).size).toBe(3);
    expect((await dataFiles(io, location)).some((p) => p.includes('/dt=__DEFAULT_PARTITION__/bucket-'))).toBe(true);
  });

  it('rolls files at a small target-file-size with contiguous sequence numbers', async () => {
    const { io, location, schema } = await setup({
      fields: [
        { name: 'id', type: 'BIGINT' },
        { name: 's', type: 'STRING' },
      ],
      options: { 'target-file-size': '64 kb' },
    });
    const w = new TableWrite(io, location, schema, { startSequence: () => 100n });
    const ids = BigInt64Array.from({ length: 50_000 }, (_, i) => BigInt(i));
    const table = new arrow.Table({
      id: arrow.makeVector(ids),
      s: arrow.vectorFromArray(
        Array.from({ length: 50_000 }, (_, i) => `row-${i * 7919}`),
        new arrow.Utf8(),
      ),
    });
    await w.write(table);
    const [msg] = await w.prepareCommit();
    const files = msg!.newFiles;
    expect(files.length).toBeGreaterThan(2);
    let next = 100n;
    let rows = 0;
    for (const f of files) {
      expect(f.minSequenceNumber).toBe(next);
      next = f.maxSequenceNumber + 1n;
      rows += f.rowCount;
    }
    expect(rows).toBe(50_000);
    expect(files.map((f) => f.fileName.replace(/^data-[0-9a-f-]{36}-/, ''))).toEqual(files.map((_, i) => `${i}.parquet`));
    // Later files are sized from the measured compression ratio: none far above the target.
    for (const f of files) expect(f.fileSize).toBeLessThan(2 * 64 * 1024);
  });
});
