import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as arrow from 'apache-arrow';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalFileIO } from '@tidemark/storage';
import { encodeParquetStream, readParquetFile, readParquetFooter, toArrowSchema, writeParquetFile } from '../src/index.js';
import type { DataField, DataType } from '../src/types.js';

const t = (root: string, extra: Record<string, unknown> = {}, nullable = true): DataType =>
  ({ root, nullable, ...extra }) as unknown as DataType;

const FIELDS: DataField[] = [
  { id: 3, name: 'id', type: t('BIGINT', {}, false) },
  { id: 7, name: 'name', type: t('VARCHAR', { length: 2147483647 }) },
  { id: 9, name: 'amount', type: t('DECIMAL', { precision: 10, scale: 2 }) },
  { id: 11, name: 'at', type: t('TIMESTAMP', { precision: 3 }) },
];
const schema = toArrowSchema(FIELDS);

/** A batch of rows `start .. start+n-1` with the read schema (field ids in the metadata). */
function batch(start: number, n: number): arrow.RecordBatch {
  const ids = Array.from({ length: n }, (_, i) => BigInt(start + i));
  const children = [
    arrow.vectorFromArray(ids, new arrow.Int64()).data[0]!,
    arrow.vectorFromArray(
      ids.map((i) => (i % 5n === 0n ? null : `n${i}`)),
      new arrow.Utf8(),
    ).data[0]!,
    arrow.makeData({
      type: schema.fields[2]!.type as arrow.Decimal,
      length: n,
      nullCount: 0,
      data: Uint32Array.from(ids.flatMap((i) => [Number(i * 125n), 0, 0, 0])),
    }),
    arrow.vectorFromArray(
      ids.map((i) => 1_700_000_000_000 + Number(i)),
      schema.fields[3]!.type as arrow.TimestampMillisecond,
    ).data[0]!,
  ];
  return new arrow.RecordBatch(schema, arrow.makeData({ type: new arrow.Struct(schema.fields), length: n, nullCount: 0, children }));
}

async function collect(chunks: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const c of chunks) parts.push(c);
  return Buffer.concat(parts);
}

// Local files: reading these multi-row-group files back through MemoryFileIO trips parquet-wasm.
const dir = mkdtempSync(join(tmpdir(), 'tidemark-parquet-stream-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const at = (name: string): string => join(dir, name);

async function rowsOf(io: LocalFileIO, path: string): Promise<string[]> {
  const out: string[] = [];
  for await (const b of readParquetFile(io, path)) {
    for (const r of new arrow.Table(b).toArray())
      out.push(JSON.stringify(r.toJSON(), (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)));
  }
  return out;
}

describe('encodeParquetStream', () => {
  it('writes the same rows, types and field ids as the whole-file writer, in row groups of the asked size', async () => {
    const batches = Array.from({ length: 25 }, (_, k) => batch(k * 1000, 1000));
    async function* source(): AsyncGenerator<arrow.RecordBatch> {
      yield* batches;
    }
    const streamed = await collect(encodeParquetStream(source(), schema, { rowGroupRows: 10_000 }));
    const io = new LocalFileIO();
    await io.write(at('streamed.parquet'), streamed);
    await io.write(at('whole.parquet'), writeParquetFile(batches));

    const footer = await readParquetFooter(io, at('streamed.parquet'));
    expect(footer.numRows).toBe(25_000n);
    expect(footer.rowGroups.map((g) => Number(g.numRows))).toEqual([10_000, 10_000, 5_000]);
    expect([...footer.topLevelFieldIds]).toEqual([
      ['id', 3],
      ['name', 7],
      ['amount', 9],
      ['at', 11],
    ]);
    const whole = await readParquetFooter(io, at('whole.parquet'));
    expect(footer.leafColumns.map((c) => [c.path.join('.'), c.physicalType, c.element.logical_type])).toEqual(
      whole.leafColumns.map((c) => [c.path.join('.'), c.physicalType, c.element.logical_type]),
    );
    const rows = await rowsOf(io, at('streamed.parquet'));
    expect(rows).toEqual(await rowsOf(io, at('whole.parquet')));
    // Row 5: a null name (every fifth), amount 5 × 1.25 as the unscaled decimal 625.
    expect(rows[5]).toMatch(/^\{"id":"5","name":null,"amount":"\W*625\W*","at":1700000000005\}$/);
  });

  it('gathers tiny batches into one row group rather than one per batch', async () => {
    const io = new LocalFileIO();
    const bytes = await collect(
      encodeParquetStream(
        Array.from({ length: 50 }, (_, k) => batch(k, 1)),
        schema,
      ),
    );
    await io.write(at('tiny.parquet'), bytes);
    const footer = await readParquetFooter(io, at('tiny.parquet'));
    expect(footer.rowGroups.map((g) => Number(g.numRows))).toEqual([50]);
  });

  it('writes a file holding only the schema when there are no rows', async () => {
    const io = new LocalFileIO();
    await io.write(at('empty.parquet'), await collect(encodeParquetStream([], schema)));
    const footer = await readParquetFooter(io, at('empty.parquet'));
    expect(footer.numRows).toBe(0n);
    expect([...footer.topLevelFieldIds.keys()]).toEqual(['id', 'name', 'amount', 'at']);
  });
});
