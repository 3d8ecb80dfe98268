/**
 * The message layout of an Arrow IPC stream, read without decoding its record batches.
 *
 * A decoded row group that is written again unchanged (a compaction of files in the table's
 * current schema) can go from the decode worker to an encode worker as IPC bytes: the main thread
 * only checks the stream's layout and schema here, and the encode worker joins the streams of a
 * row group's worth of inputs ({@link joinIpcStreams}) instead of the main thread turning them
 * into Arrow and back.
 */
import * as arrow from 'apache-arrow';

import { FormatError } from './errors.js';

/** The bytes of one Arrow IPC stream and where its parts are. */
export interface IpcStreamSegment {
  /** The whole stream (schema message, record batches, end-of-stream marker). */
  readonly bytes: Uint8Array;
  /** Offset of the first message after the schema message. */
  readonly schemaEnd: number;
  /** Offset of the end-of-stream marker (or the end of the bytes when there is none). */
  readonly batchesEnd: number;
  /** Rows of all its record batches. */
  readonly rows: number;
  /** Its schema message's flatbuffer bytes (compare them, or decode with {@link ipcSegmentSchema}). */
  readonly schemaMessage: Uint8Array;
}

const CONTINUATION = 0xffffffff;

/**
 * The layout of an IPC stream whose messages are one schema message followed by record batches
 * only (what parquet-wasm emits for a decoded row group), or null for any other stream: dictionary
 * batches, the pre-0.15 framing without continuation markers, a body overrunning the bytes. A
 * stream that is not plain is still a valid stream; callers take the Arrow path for it.
 */
export function scanIpcStream(bytes: Uint8Array): IpcStreamSegment | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = 0;
  let schemaEnd = -1;
  let schemaMessage: Uint8Array | null = null;
  let rows = 0;
  while (offset + 8 <= bytes.length) {
    if (view.getUint32(offset, true) !== CONTINUATION) return null;
    const length = view.getInt32(offset + 4, true);
    if (length === 0) return schemaEnd < 0 ? null : { bytes, schemaEnd, batchesEnd: offset, rows, schemaMessage: schemaMessage! };
    if (length < 0 || offset + 8 + length > bytes.length) return null;
    const metadata = bytes.subarray(offset + 8, offset + 8 + length);
    let message: arrow.Message;
    try {
      message = arrow.Message.decode(metadata);
    } catch {
      return null;
    }
    const end = offset + 8 + length + Number(message.bodyLength);
    if (end > bytes.length) return null;
    if (schemaEnd < 0) {
      if (!message.isSchema()) return null;
      schemaEnd = end;
      schemaMessage = metadata;
    } else if (message.isRecordBatch()) {
      rows += Number((message.header() as unknown as { length: number | bigint }).length);
    } else return null;
    offset = end;
  }
  return offset === bytes.length && schemaEnd >= 0 ? { bytes, schemaEnd, batchesEnd: offset, rows, schemaMessage: schemaMessage! } : null;
}

/** The schema of a segment (decoded from its schema message). */
export function ipcSegmentSchema(segment: Pick<IpcStreamSegment, 'schemaMessage'>): arrow.Schema {
  const message = arrow.Message.decode(segment.schemaMessage);
  return message.header() as arrow.Schema;
}

/**
 * The streams joined into one: the first one's schema message, then every stream's record
 * batches in order, then one end-of-stream marker. All must have the same schema (the caller
 * checks); messages stay 8-byte aligned since every message's length is. The encode worker
 * (`worker/parquet-worker.mjs`) joins the same way; this is the calling thread's copy.
 * @internal
 */
export function joinIpcStreams(segments: readonly Pick<IpcStreamSegment, 'bytes' | 'schemaEnd' | 'batchesEnd'>[]): Uint8Array {
  if (segments.length === 0) throw new FormatError('joinIpcStreams: no stream to join');
  const first = segments[0]!;
  let length = first.schemaEnd + 8;
  for (const s of segments) length += s.batchesEnd - s.schemaEnd;
  const out = new Uint8Array(length);
  out.set(first.bytes.subarray(0, first.schemaEnd), 0);
  let at = first.schemaEnd;
  for (const s of segments) {
    out.set(s.bytes.subarray(s.schemaEnd, s.batchesEnd), at);
    at += s.batchesEnd - s.schemaEnd;
  }
  new DataView(out.buffer).setUint32(at, CONTINUATION, true);
  return out;
}

/**
 * Whether two Arrow schemas describe the same columns for the Parquet writer: names, types,
 * nullability and field metadata (the `PARQUET:field_id`s), children included.
 */
export function sameIpcSchema(a: arrow.Schema, b: arrow.Schema): boolean {
  return (
    a.fields.length === b.fields.length && a.fields.every((f, i) => sameField(f, b.fields[i]!)) && sameMetadata(a.metadata, b.metadata)
  );
}

function sameField(a: arrow.Field, b: arrow.Field): boolean {
  if (a.name !== b.name || a.nullable !== b.nullable || !sameMetadata(a.metadata, b.metadata)) return false;
  if (!arrow.util.compareTypes(a.type, b.type)) return false;
  const ac = a.type.children ?? [];
  const bc = b.type.children ?? [];
  return ac.length === bc.length && ac.every((c: arrow.Field, i: number) => sameField(c, bc[i]!));
}

function sameMetadata(a: Map<string, string>, b: Map<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}
