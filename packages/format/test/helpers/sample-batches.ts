/**
 * Three-column record batches (id BIGINT NOT NULL = row number, name STRING with nulls, amount
 * DOUBLE) with Paimon field ids, for tests that compare Parquet files written different ways.
 */
import * as arrow from 'apache-arrow';
import { utf8Vector } from '../../src/index.js';

const meta = (id: number): Map<string, string> => new Map([['PARQUET:field_id', String(id)]]);

/** `rows` rows in batches of `batchRows`. */
export function sampleBatches(rows: number, batchRows: number): arrow.RecordBatch[] {
  const fields = [
    new arrow.Field('id', new arrow.Int64(), false, meta(1)),
    new arrow.Field('name', new arrow.Utf8(), true, meta(2)),
    new arrow.Field('amount', new arrow.Float64(), true, meta(3)),
  ];
  const schema = new arrow.Schema(fields);
  const out: arrow.RecordBatch[] = [];
  for (let start = 0; start < rows; start += batchRows) {
    const n = Math.min(batchRows, rows - start);
    const children = [
      arrow.makeData({
        type: fields[0]!.type as arrow.Int64,
        length: n,
        nullCount: 0,
        data: BigInt64Array.from({ length: n }, (_, i) => BigInt(start + i)),
      }),
      utf8Vector(Array.from({ length: n }, (_, i) => ((start + i) % 11 === 0 ? null : `n${((start + i) * 7919) % 100_003}`))).data[0]!,
      arrow.makeData({
        type: fields[2]!.type as arrow.Float64,
        length: n,
        nullCount: 0,
        data: Float64Array.from({ length: n }, (_, i) => Math.cos(start + i)),
      }),
    ];
    out.push(new arrow.RecordBatch(schema, arrow.makeData({ type: new arrow.Struct(fields), length: n, nullCount: 0, children })));
  }
  return out;
}
