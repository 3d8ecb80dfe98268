import { join } from 'node:path';
import { parquetMetadata } from 'hyparquet';
import { describe, expect, it } from 'vitest';
import { LocalFileIO, MemoryFileIO } from '@tidemark/storage';
import { deserializeBinaryRow, readParquetFooter, type DataType, type TableSchema } from '@tidemark/format';
import { KeyValueFileWriter, readDataFile, RowKind, type KeyValue } from '../src/index.js';
import { fixturesDir } from '../../../test/support/fixtures.js';

const STR: DataType = { root: 'VARCHAR', nullable: false, length: 2147483647 } as DataType;
const INT: DataType = { root: 'INT', nullable: false };
const DOUBLE: DataType = { root: 'DOUBLE', nullable: true };

/** The schema of the Java-written pk-mor fixture. */
const schema: TableSchema = {
  version: 3,
  id: 0,
  fields: [
    { id: 0, name: 'f0', type: STR },
    { id: 1, name: 'f1', type: INT },
    { id: 2, name: 'f2', type: INT },
    { id: 3, name: 'f3', type: DOUBLE },
  ],
  highestFieldId: 3,
  partitionKeys: ['f1'],
  primaryKeys: ['f0', 'f1', 'f2'],
  options: { bucket: '2', 'bucket-key': 'f2' },
  timeMillis: 0,
};

const LONG = 'Two roads diverged in a wood, and I took the one less traveled by, And that has made all the difference.';

function kv(f0: string, f2: number, f3: number | null, sequence: number, rowKind: KeyValue['rowKind'] = RowKind.INSERT): KeyValue {
  return { key: [f0, f2], sequence: BigInt(sequence), rowKind, value: [f0, 10, f2, f3] };
}

function writer(
  io: MemoryFileIO | LocalFileIO,
  dir: string,
  extra: Partial<ConstructorParameters<typeof KeyValueFileWriter>[0]> = {},
): KeyValueFileWriter {
  let n = 0;
  return new KeyValueFileWriter({
    fileIO: io,
    schema,
    pathOf: (name) => `${dir}/${name}`,
    newFileName: () => `data-test-${n++}.parquet`,
    level: 0,
    fileSource: 0,
    now: () => 1_700_000_000_000,
    ...extra,
  });
}

describe('KeyValueFileWriter', () => {
  it('writes _SEQUENCE_NUMBER (distinct in a file) without a dictionary, other columns with one', async () => {
    const io = new MemoryFileIO();
    const w = writer(io, 'memory://kv/plain');
    await w.writeKeyValues(Array.from({ length: 50 }, (_, i) => kv(`k${i}`, i, i % 3, 1000 + i)));
    const [meta] = await w.close();
    const bytes = await io.read(`memory://kv/plain/${meta!.fileName}`);
    const footer = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
    const dictionary = new Map(
      footer.row_groups[0]!.columns.map((c) => [c.meta_data!.path_in_schema.join('.'), c.meta_data!.dictionary_page_offset !== undefined]),
    );
    expect(dictionary.get('_SEQUENCE_NUMBER')).toBe(false);
    expect(dictionary.get('f3')).toBe(true);
    // A key of three fields repeats its fields' values: they keep their dictionaries.
    expect(dictionary.get('_KEY_f2')).toBe(true);
    // A single-field key is distinct in a file.
    const single = writer(io, 'memory://kv/plain1', { schema: { ...schema, partitionKeys: [], primaryKeys: ['f2'] } });
    await single.writeKeyValues(
      Array.from({ length: 50 }, (_, i) => ({ key: [i], sequence: BigInt(i), rowKind: RowKind.INSERT, value: ['x', 10, i, null] })),
    );
    const [one] = await single.close();
    const oneBytes = await io.read(`memory://kv/plain1/${one!.fileName}`);
    const oneFooter = parquetMetadata(oneBytes.buffer.slice(oneBytes.byteOffset, oneBytes.byteOffset + oneBytes.byteLength) as ArrayBuffer);
    const keyChunk = oneFooter.row_groups[0]!.columns.find((c) => c.meta_data!.path_in_schema[0] === '_KEY_f2')!;
    expect(keyChunk.meta_data!.dictionary_page_offset).toBeUndefined();
  });

  it('records the smallest and largest sequence number of unordered records (negative, beyond 32 bits)', async () => {
    const io = new MemoryFileIO();
    const w = writer(io, 'memory://kv/seq');
    const sequences = [7, -3, 2 ** 33 + 1, 2 ** 33, -(2 ** 40), 0, 2 ** 32 - 1];
    await w.writeKeyValues(sequences.map((seq, i) => kv(`k${i}`, i, null, seq)));
    const [meta] = await w.close();
    expect([meta!.minSequenceNumber, meta!.maxSequenceNumber]).toEqual([-(2n ** 40n), 2n ** 33n + 1n]);
  });

  it('writes the primary-key layout with Java field ids and fills DataFileMeta like Java', async () => {
    const io = new MemoryFileIO();
    const w = writer(io, 'memory://kv/b0', { level: 3, fileSource: 1 });
    await w.writeKeyValues([kv('Alice', 1, 19.1, 7), kv('Bob', 0, null, 5, RowKind.DELETE), kv(LONG, 1, 11.0, 9, RowKind.UPDATE_AFTER)]);
    const [meta, ...rest] = await w.close();
    expect(rest).toEqual([]);
    const footer = await readParquetFooter(io, `memory://kv/b0/${meta!.fileName}`);
    expect([...footer.topLevelFieldIds.entries()]).toEqual([
      ['_KEY_f0', 1073741823],
      ['_KEY_f2', 1073741825],
      ['_SEQUENCE_NUMBER', 2147483646],
      ['_VALUE_KIND', 2147483645],
      ['f0', 0],
      ['f1', 1],
      ['f2', 2],
      ['f3', 3],
    ]);
    const keyTypes = [STR, INT];
    expect(deserializeBinaryRow(meta!.minKey, keyTypes)).toEqual(['Alice', 1]);
    expect(deserializeBinaryRow(meta!.maxKey, keyTypes)).toEqual([LONG, 1]);
    // Key statistics are exact; value statistics are truncated to 16 characters (truncate(16)).
    expect(deserializeBinaryRow(meta!.keyStats.maxValues, keyTypes)).toEqual([LONG, 1]);
    expect(deserializeBinaryRow(meta!.keyStats.minValues, keyTypes)).toEqual(['Alice', 0]);
    expect(
      deserializeBinaryRow(
        meta!.valueStats.maxValues,
        schema.fields.map((f) => f.type),
      ),
    ).toEqual(['Two roads diverh', 10, 1, 19.1]);
    expect(meta!.valueStats.nullCounts).toEqual([0, 0, 0, 1]);
    expect(meta).toMatchObject({
      rowCount: 3,
      minSequenceNumber: 5n,
      maxSequenceNumber: 9n,
      deleteRowCount: 1,
      level: 3,
      fileSource: 1,
      schemaId: 0,
      extraFiles: [],
      embeddedIndex: null,
      valueStatsCols: null,
    });
    const rows: Array<[string, bigint, number]> = [];
    for await (const b of readDataFile(io, { path: `memory://kv/b0/${meta!.fileName}`, schema }, schema.fields, { keyValue: true })) {
      for (let i = 0; i < b.batch.numRows; i++) rows.push([String(b.batch.getChildAt(0)!.get(i)), b.sequence![i]!, b.valueKind![i]!]);
    }
    expect(rows).toEqual([
      ['Alice', 7n, 0],
      ['Bob', 5n, 3],
      [LONG, 9n, 2],
    ]);
  });

  it('has the column names, order, types and field ids of a Java-written pk-mor data file', async (ctx) => {
    const fixtures = fixturesDir('KeyValueFileWriter layout');
    if (!fixtures) return ctx.skip();
    const local = new LocalFileIO();
    const javaFile = join(
      fixtures,
      'pk-mor/default.db/pk_table_scan_and_read_mor/f1=10/bucket-1/data-3a6000ce-0611-462e-8a99-f3cb28aa6f08-0.parquet',
    );
    const java = await readParquetFooter(local, javaFile);
    const io = new MemoryFileIO();
    const w = writer(io, 'memory://kv/layout');
    await w.writeKeyValues([kv('Alex', 0, 16.1, 0)]);
    const [meta] = await w.close();
    const ours = await readParquetFooter(io, `memory://kv/layout/${meta!.fileName}`);
    const shape = (f: typeof java): unknown[] =>
      f.leafColumns.map((c) => [c.path.join('.'), c.physicalType, c.fieldId, c.element.repetition_type, c.element.converted_type ?? null]);
    expect(shape(ours)).toEqual(shape(java));
  });

  it('rolls files at target-file-size, keeping key order across files', async () => {
    const io = new MemoryFileIO();
    const w = writer(io, 'memory://kv/roll', { targetFileSize: 2048 });
    const all: KeyValue[] = [];
    for (let i = 0; i < 600; i++) all.push(kv(`key-${String(i).padStart(5, '0')}`, i % 2, i, i));
    for (let i = 0; i < all.length; i += 100) await w.writeKeyValues(all.slice(i, i + 100));
    const files = await w.close();
    expect(files.length).toBeGreaterThan(2);
    expect(files.reduce((s, f) => s + f.rowCount, 0)).toBe(600);
    let prevMax = -1n;
    for (const f of files) {
      expect(f.minSequenceNumber).toBe(prevMax + 1n);
      prevMax = f.maxSequenceNumber;
      expect(f.fileSize).toBeLessThan(2048 * 2);
    }
    const keys = files.map(
      (f) => [deserializeBinaryRow(f.minKey, [STR, INT])[0], deserializeBinaryRow(f.maxKey, [STR, INT])[0]] as string[],
    );
    for (let i = 1; i < keys.length; i++) expect(keys[i]![0]! > keys[i - 1]![1]!).toBe(true);
  });

  it('abort deletes the files written', async () => {
    const io = new MemoryFileIO();
    const w = writer(io, 'memory://kv/abort', { targetFileSize: 1024 });
    for (let i = 0; i < 300; i++) await w.writeKeyValues([kv(`k${String(i).padStart(4, '0')}`, 0, i, i)]);
    expect(w.writtenFiles.length).toBeGreaterThan(0);
    await w.abort();
    const left: string[] = [];
    for await (const st of io.list('memory://kv/abort')) left.push(st.path);
    expect(left).toEqual([]);
  });
});
