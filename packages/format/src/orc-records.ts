/**
 * ORC manifests (`manifest.format = orc`): the rows of an ORC manifest, manifest list or index
 * manifest as the same plain records the Avro decoder produces, so one set of field mappers serves
 * both formats. Structs become objects, lists arrays, binaries Buffers, 64-bit integers numbers when
 * safe and bigints otherwise (as the Avro decoder's long), timestamps epoch milliseconds (as Avro's
 * `timestamp-millis`).
 */
import * as arrow from 'apache-arrow';
import { bytesSource, OrcReader } from '@tidemark/orc';

import type { AvroRecord } from './avro-container.js';
import { CorruptFileError } from './errors.js';
import { orcError } from './orc-data-file.js';

/** The ORC magic at the start of every ORC file. */
export const ORC_MAGIC = Uint8Array.of(0x4f, 0x52, 0x43);

/** True when the bytes start with the ORC magic. */
export function isOrc(bytes: Uint8Array): boolean {
  return bytes.length >= 3 && bytes[0] === ORC_MAGIC[0] && bytes[1] === ORC_MAGIC[1] && bytes[2] === ORC_MAGIC[2];
}

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** The plain value of row `i` of `data`. */
function value(data: arrow.Data, i: number, path: string, name: string): unknown {
  if (!data.getValid(i)) return null;
  const t = data.type as arrow.DataType;
  const j = data.offset + i;
  if (arrow.DataType.isInt(t)) {
    const v = data.values[j] as number | bigint;
    if (typeof v !== 'bigint') return v;
    return v >= MIN_SAFE && v <= MAX_SAFE ? Number(v) : v;
  }
  if (arrow.DataType.isFloat(t)) return data.values[j] as number;
  if (arrow.DataType.isBool(t)) return ((data.values[j >> 3]! >> (j & 7)) & 1) === 1;
  if (arrow.DataType.isUtf8(t)) {
    return Buffer.from(
      data.values.buffer,
      data.values.byteOffset + data.valueOffsets[j]!,
      data.valueOffsets[j + 1]! - data.valueOffsets[j]!,
    ).toString('utf8');
  }
  if (arrow.DataType.isBinary(t)) {
    return Buffer.from(
      data.values.buffer,
      data.values.byteOffset + data.valueOffsets[j]!,
      data.valueOffsets[j + 1]! - data.valueOffsets[j]!,
    );
  }
  if (arrow.DataType.isTimestamp(t)) {
    const ns = data.values[j] as bigint;
    const ms = ns / 1_000_000n - (ns % 1_000_000n < 0n ? 1n : 0n);
    return Number(ms);
  }
  if (arrow.DataType.isDate(t)) return data.values[j] as number;
  if (arrow.DataType.isStruct(t)) return struct(data, j, path, `${name}.`);
  if (arrow.DataType.isList(t)) {
    const out: unknown[] = [];
    for (let k = data.valueOffsets[j]!; k < data.valueOffsets[j + 1]!; k++) out.push(value(data.children[0]!, k, path, `${name}[]`));
    return out;
  }
  if (arrow.DataType.isMap(t)) {
    const entries = data.children[0]!;
    const out: Record<string, unknown> = {};
    for (let k = data.valueOffsets[j]!; k < data.valueOffsets[j + 1]!; k++) {
      out[String(value(entries.children[0]!, k, path, `${name}.key`))] = value(entries.children[1]!, k, path, `${name}.value`);
    }
    return out;
  }
  throw new CorruptFileError(path, `manifest field '${name}' has ORC type ${String(t)}, which no manifest field has`);
}

function struct(data: arrow.Data, i: number, path: string, prefix: string): AvroRecord {
  const out: AvroRecord = {};
  (data.type as arrow.Struct).children.forEach((f, k) => (out[f.name] = value(data.children[k]!, i, path, `${prefix}${f.name}`)));
  return out;
}

/**
 * Streams the rows of an ORC manifest file as records, one stripe decoded at a time.
 *
 * @throws CorruptFileError (naming `path`) when the bytes are not a readable ORC file.
 */
export async function* readOrcRecords(bytes: Uint8Array, path: string): AsyncGenerator<AvroRecord, void, undefined> {
  let reader: OrcReader;
  try {
    reader = await OrcReader.open(bytesSource(bytes), path);
  } catch (err) {
    throw orcError(path, err);
  }
  const batches = reader.readBatches();
  for (;;) {
    let next: IteratorResult<arrow.RecordBatch>;
    try {
      next = await batches.next();
    } catch (err) {
      throw orcError(path, err);
    }
    if (next.done === true) return;
    const batch = next.value;
    for (let i = 0; i < batch.numRows; i++) yield struct(batch.data, i, path, '');
  }
}
