import { Writable } from 'node:stream';
import { Field, Int32, Int64, makeData, RecordBatch, Schema, Struct, Utf8 } from 'apache-arrow';

/** A Writable that keeps everything written to it as text. */
export class MemoryStream extends Writable {
  text = '';
  isTTY = false;
  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.text += chunk.toString();
    cb();
  }
}

/** A batch with an id (Int64) and a name (Utf8, null where the name is null) column. */
export function idNameBatch(ids: readonly bigint[], names: readonly (string | null)[]): RecordBatch {
  const schema = new Schema([new Field('id', new Int64(), false), new Field('name', new Utf8(), true)]);
  const enc = new TextEncoder();
  const parts = names.map((n) => enc.encode(n ?? ''));
  const offsets = new Int32Array(parts.length + 1);
  parts.forEach((p, i) => (offsets[i + 1] = offsets[i]! + p.length));
  const bytes = new Uint8Array(offsets[parts.length]!);
  parts.forEach((p, i) => bytes.set(p, offsets[i]!));
  const valid = new Uint8Array(Math.ceil(names.length / 8) + 8);
  names.forEach((n, i) => {
    if (n !== null) valid[i >> 3]! |= 1 << (i & 7);
  });
  const children = [
    makeData({ type: new Int64(), data: BigInt64Array.from(ids), length: ids.length }),
    makeData({ type: new Utf8(), data: bytes, valueOffsets: offsets, length: names.length, nullBitmap: valid }),
  ];
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), children, length: ids.length }));
}

/** A batch with a single Int32 column `n` holding `values`. */
export function intBatch(values: readonly number[]): RecordBatch {
  const schema = new Schema([new Field('n', new Int32(), false)]);
  const child = makeData({ type: new Int32(), data: Int32Array.from(values), length: values.length });
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), children: [child], length: values.length }));
}
