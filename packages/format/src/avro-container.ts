/**
 * Avro object container files (the format of Paimon manifests), read block by block and written
 * in one go, on top of avsc's datum encoding.
 *
 * The container framing is implemented here rather than with avsc's Node streams so that codecs
 * can be async, truncation and garbage are reported as {@link CorruptFileError} with the file path,
 * and readers pull records lazily from an async iterator.
 *
 * Longs: every Avro `long` is decoded as a JS `number` when it is a safe integer and as a `bigint`
 * otherwise (avsc's default type throws on such values), and both are accepted on encode. The
 * typed manifest models decide per field which of the two they expose.
 */
import avsc from 'avsc';
import { randomBytes } from 'node:crypto';
import { getAvroCodec, type AvroCodec, type AvroCodecName } from './avro-codecs.js';
import { CorruptFileError, FormatError } from './errors.js';

/** An Avro schema as parsed JSON (or its JSON text). */
export type AvroSchemaJson = Record<string, unknown> | string;

/** A decoded Avro record: field name to value (nested records are objects, `bytes` are Buffers). */
export type AvroRecord = Record<string, unknown>;

/** Header of an Avro object container file. */
export interface AvroHeader {
  /** The writer schema as JSON text, exactly as stored under `avro.schema`. */
  readonly schemaText: string;
  /** The writer schema, parsed. */
  readonly schema: Record<string, unknown>;
  /** `avro.codec`, `null` when absent. */
  readonly codec: string;
  /** All metadata entries, including `avro.schema` and `avro.codec`. */
  readonly metadata: ReadonlyMap<string, Uint8Array>;
  readonly syncMarker: Uint8Array;
}

/** Options for {@link readAvroRecords}. */
export interface AvroReadOptions {
  /** Path of the file, used in error messages. */
  readonly path: string;
  /** Called once with the header, before the first record. */
  readonly onHeader?: (header: AvroHeader) => void;
}

/** Options for {@link writeAvroFile}. */
export interface AvroWriteOptions {
  /** Block codec; default `zstandard` (Paimon's default manifest compression). */
  readonly codec?: AvroCodecName;
  /** zstd level for `zstandard` (default 1, Paimon's default). */
  readonly zstdLevel?: number;
  /** Uncompressed bytes per block before it is flushed (default 64 KiB, Avro's Java default). */
  readonly blockSize?: number;
  /** 16-byte sync marker; random by default. */
  readonly syncMarker?: Uint8Array;
}

const MAGIC = Buffer.from([0x4f, 0x62, 0x6a, 0x01]); // "Obj" 1
const SYNC_SIZE = 16;
const DEFAULT_BLOCK_SIZE = 64 * 1024;
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

/**
 * Avro long that decodes to a number when it fits exactly and to a bigint otherwise, and encodes
 * either (integers only).
 */
const HYBRID_LONG = avsc.types.LongType.__with({
  fromBuffer: (buf: Buffer): number | bigint => {
    const v = buf.readBigInt64LE(0);
    return v >= MIN_SAFE && v <= MAX_SAFE ? Number(v) : v;
  },
  toBuffer: (v: number | bigint): Buffer => {
    const buf = Buffer.alloc(8);
    buf.writeBigInt64LE(BigInt(v), 0);
    return buf;
  },
  fromJSON: (v: unknown): number | bigint => (typeof v === 'string' ? BigInt(v) : (v as number)),
  toJSON: (v: number | bigint): number => Number(v),
  isValid: (v: unknown): boolean =>
    (typeof v === 'number' && Number.isSafeInteger(v)) || (typeof v === 'bigint' && v >= INT64_MIN && v <= INT64_MAX),
  compare: (a: number | bigint, b: number | bigint): number => (a < b ? -1 : a > b ? 1 : 0),
});

/** Plain long for container framing (block counts and sizes are far below 2^53). */
const FRAMING_LONG = avsc.Type.forSchema('long');

const HEADER_TYPE = avsc.Type.forSchema({
  type: 'record',
  name: 'org.apache.avro.file.Header',
  fields: [
    { name: 'magic', type: { type: 'fixed', name: 'Magic', size: 4 } },
    { name: 'meta', type: { type: 'map', values: 'bytes' } },
    { name: 'sync', type: { type: 'fixed', name: 'Sync', size: SYNC_SIZE } },
  ],
});

const typeCache = new Map<string, avsc.Type>();
const TYPE_CACHE_LIMIT = 64;

/**
 * Builds the avsc type of a schema with the hybrid long type. Cached by schema text because every
 * manifest of a table carries the same writer schema.
 */
export function avroTypeForSchema(schema: AvroSchemaJson): avsc.Type {
  const text = typeof schema === 'string' ? schema : JSON.stringify(schema);
  let type = typeCache.get(text);
  if (type === undefined) {
    const parsed: unknown = typeof schema === 'string' ? JSON.parse(schema) : schema;
    type = avsc.Type.forSchema(parsed as avsc.Schema, { registry: { long: HYBRID_LONG } });
    if (typeCache.size >= TYPE_CACHE_LIMIT) typeCache.clear();
    typeCache.set(text, type);
  }
  return type;
}

/** Sequential reader over a byte source that may arrive in chunks. */
class ByteSource {
  private buf: Buffer;
  private pos = 0;
  private readonly iterator: AsyncIterator<Uint8Array> | undefined;
  private ended: boolean;

  constructor(source: Uint8Array | AsyncIterable<Uint8Array>) {
    if (source instanceof Uint8Array) {
      this.buf = toBuffer(source);
      this.iterator = undefined;
      this.ended = true;
    } else {
      this.buf = Buffer.alloc(0);
      this.iterator = source[Symbol.asyncIterator]();
      this.ended = false;
    }
  }

  get available(): number {
    return this.buf.length - this.pos;
  }

  /** The unread bytes (a view; valid until the next {@link more}). */
  get rest(): Buffer {
    return this.buf.subarray(this.pos);
  }

  get atEnd(): boolean {
    return this.ended && this.available === 0;
  }

  /** Pulls one more chunk; returns false at the end of the source. */
  async more(): Promise<boolean> {
    while (!this.ended && this.iterator !== undefined) {
      const next = await this.iterator.next();
      if (next.done === true) {
        this.ended = true;
        return false;
      }
      if (next.value.length === 0) continue;
      this.buf = this.available === 0 ? toBuffer(next.value) : Buffer.concat([this.rest, next.value]);
      this.pos = 0;
      return true;
    }
    return false;
  }

  /** Makes at least `n` unread bytes available; false if the source ends first. */
  async ensure(n: number): Promise<boolean> {
    while (this.available < n) {
      if (!(await this.more())) return false;
    }
    return true;
  }

  skip(n: number): void {
    this.pos += n;
  }

  async close(): Promise<void> {
    if (!this.ended) {
      this.ended = true;
      await this.iterator?.return?.();
    }
  }
}

function toBuffer(data: Uint8Array): Buffer {
  return Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

/**
 * Decodes a value with avsc from the start of the unread bytes, pulling more chunks while the
 * value is incomplete. Returns undefined when the source ends before the value is complete.
 */
async function decodeFromSource(src: ByteSource, type: avsc.Type): Promise<unknown> {
  for (;;) {
    const result = type.decode(src.rest, 0);
    if (result.offset >= 0) {
      src.skip(result.offset);
      return result.value;
    }
    if (!(await src.more())) return undefined;
  }
}

async function readHeader(src: ByteSource, path: string): Promise<AvroHeader> {
  if (!(await src.ensure(MAGIC.length)) || !src.rest.subarray(0, MAGIC.length).equals(MAGIC)) {
    const got = src.rest.subarray(0, MAGIC.length).toString('hex');
    throw new CorruptFileError(path, `not an Avro object container file (expected magic 4f626a01, found ${got || 'end of file'})`);
  }
  let raw: { meta: Record<string, Buffer>; sync: Buffer } | undefined;
  try {
    raw = (await decodeFromSource(src, HEADER_TYPE)) as typeof raw;
  } catch (err) {
    throw new CorruptFileError(path, `unreadable Avro header: ${(err as Error).message}`, { cause: err });
  }
  if (raw === undefined) throw new CorruptFileError(path, 'file ends inside the Avro header');
  const metadata = new Map<string, Uint8Array>(Object.entries(raw.meta));
  const schemaBytes = metadata.get('avro.schema');
  if (schemaBytes === undefined) throw new CorruptFileError(path, "Avro header has no 'avro.schema'");
  const schemaText = Buffer.from(schemaBytes).toString('utf8');
  let schema: Record<string, unknown>;
  try {
    schema = JSON.parse(schemaText) as Record<string, unknown>;
  } catch (err) {
    throw new CorruptFileError(path, "Avro header 'avro.schema' is not valid JSON", { cause: err });
  }
  const codecBytes = metadata.get('avro.codec');
  const codec = codecBytes === undefined ? 'null' : Buffer.from(codecBytes).toString('utf8');
  return { schemaText, schema, codec, metadata, syncMarker: new Uint8Array(raw.sync) };
}

/** One decompressed block of an Avro object container file (see {@link readAvroBlocks}). */
export interface AvroBlock {
  /** The file's header (the same object for every block of a file). */
  readonly header: AvroHeader;
  /** 0-based index of the block in the file, for error messages. */
  readonly index: number;
  /** Number of records the block declares. */
  readonly count: number;
  /** The block's records, decompressed, back to back in the writer schema's binary encoding. */
  readonly data: Buffer;
}

/**
 * Streams the decompressed blocks of an Avro object container file, checking the framing (magic,
 * header, sync markers, truncation) as {@link readAvroRecords} does. For decoders that walk the
 * record bytes themselves instead of building one object per record.
 *
 * @throws CorruptFileError (naming `options.path`) for a bad magic, a truncated header or block, a
 *   sync-marker mismatch or an undecompressible block.
 * @throws FormatError for a codec this package does not support.
 */
export async function* readAvroBlocks(
  source: Uint8Array | AsyncIterable<Uint8Array>,
  options: AvroReadOptions,
): AsyncGenerator<AvroBlock, void, undefined> {
  const { path } = options;
  const src = new ByteSource(source);
  let pending: Promise<{ count: number; data: Promise<Buffer> } | null> | undefined;
  try {
    const header = await readHeader(src, path);
    let codec: AvroCodec;
    try {
      codec = getAvroCodec(header.codec);
    } catch (err) {
      throw new FormatError(`${path}: ${(err as Error).message}`, { cause: err });
    }
    options.onHeader?.(header);
    const sync = Buffer.from(header.syncMarker);

    /** Reads a block's framing and starts decompressing it; null at the end of the file. */
    const nextBlock = async (blockIndex: number): Promise<{ count: number; data: Promise<Buffer> } | null> => {
      if (src.available === 0 && !(await src.more())) return null;
      const count = await readFramingLong(src, path, blockIndex, 'record count');
      const size = await readFramingLong(src, path, blockIndex, 'byte size');
      if (!(await src.ensure(size + SYNC_SIZE))) {
        throw new CorruptFileError(
          path,
          `file is truncated: block ${blockIndex} declares ${size} bytes + sync marker, only ${src.available} remain`,
        );
      }
      const rest = src.rest;
      const compressed = rest.subarray(0, size);
      if (!rest.subarray(size, size + SYNC_SIZE).equals(sync)) {
        throw new CorruptFileError(path, `sync marker after block ${blockIndex} does not match the header`);
      }
      src.skip(size + SYNC_SIZE);
      const data = codec.decompress(compressed).then(toBuffer, (err: unknown) => {
        throw new CorruptFileError(path, `cannot decompress block ${blockIndex} (${codec.name}): ${(err as Error).message}`, {
          cause: err,
        });
      });
      data.catch(() => undefined); // awaited in order below
      return { count, data };
    };

    // The next block is decompressed (off the main thread for zstd) while the consumer decodes
    // this one. Its framing errors are raised only once this block is consumed, as before.
    pending = nextBlock(0);
    for (let blockIndex = 0; ; blockIndex++) {
      const block = await pending;
      if (block === null) return;
      const data = await block.data;
      pending = nextBlock(blockIndex + 1);
      pending.catch(() => undefined);
      yield { header, index: blockIndex, count: block.count, data };
    }
  } finally {
    // A consumer stopping early: let the read ahead finish with the source before closing it.
    await pending?.then((b) => b?.data).catch(() => undefined);
    await src.close();
  }
}

/**
 * Streams the records of an Avro object container file. Blocks are read, decompressed and decoded
 * one at a time as the consumer pulls records, so a large file (or a chunked download) is never
 * materialised as a whole record list.
 *
 * Records are decoded with the file's own writer schema; callers map fields by name.
 *
 * Avro has no end-of-file marker, so a file cut exactly after a block's sync marker reads as a
 * valid shorter file; callers that know the expected size (e.g. `_FILE_SIZE` of a manifest list
 * record) should compare it. Every other truncation is detected.
 *
 * @throws CorruptFileError (naming `options.path`) for a bad magic, a truncated header or block, a
 *   sync-marker mismatch, an undecodable block or record bytes left over in a block.
 * @throws FormatError for a codec this package does not support.
 */
export async function* readAvroRecords(
  source: Uint8Array | AsyncIterable<Uint8Array>,
  options: AvroReadOptions,
): AsyncGenerator<AvroRecord, void, undefined> {
  const { path } = options;
  let type: avsc.Type | undefined;
  const onHeader = (header: AvroHeader): void => {
    try {
      type = avroTypeForSchema(header.schemaText);
    } catch (err) {
      throw new CorruptFileError(path, `invalid writer schema: ${(err as Error).message}`, { cause: err });
    }
    options.onHeader?.(header);
  };
  for await (const block of readAvroBlocks(source, { path, onHeader })) yield* avroBlockRecords(block, type!, path);
}

/**
 * Decodes the records of one block with avsc (`type` from {@link avroTypeForSchema} of the
 * block's writer schema).
 *
 * @throws CorruptFileError (naming `path`) for undecodable record bytes, a block that ends inside
 *   a record or bytes left over after the declared records.
 */
export function* avroBlockRecords(block: AvroBlock, type: avsc.Type, path: string): Generator<AvroRecord, void, undefined> {
  const { index: blockIndex, count, data } = block;
  let offset = 0;
  for (let i = 0; i < count; i++) {
    let result: { value: unknown; offset: number };
    try {
      result = type.decode(data, offset);
    } catch (err) {
      throw new CorruptFileError(path, `cannot decode record ${i} of block ${blockIndex}: ${(err as Error).message}`, { cause: err });
    }
    if (result.offset < 0) {
      throw new CorruptFileError(path, `block ${blockIndex} ends inside record ${i} of ${count}`);
    }
    offset = result.offset;
    yield result.value as AvroRecord;
  }
  if (offset !== data.length) {
    throw new CorruptFileError(path, `block ${blockIndex} has ${data.length - offset} bytes left after its ${count} records`);
  }
}

async function readFramingLong(src: ByteSource, path: string, block: number, what: string): Promise<number> {
  let value: unknown;
  try {
    value = await decodeFromSource(src, FRAMING_LONG);
  } catch (err) {
    throw new CorruptFileError(path, `invalid ${what} of block ${block}: ${(err as Error).message}`, { cause: err });
  }
  if (value === undefined) throw new CorruptFileError(path, `file is truncated inside the ${what} of block ${block}`);
  if (typeof value !== 'number' || value < 0) {
    throw new CorruptFileError(path, `invalid ${what} ${String(value)} of block ${block}`);
  }
  return value;
}

/** Reads just the header of an Avro container file. */
export async function readAvroHeader(
  source: Uint8Array | AsyncIterable<Uint8Array>,
  options: { readonly path: string },
): Promise<AvroHeader> {
  const src = new ByteSource(source);
  try {
    return await readHeader(src, options.path);
  } finally {
    await src.close();
  }
}

/**
 * Writes an Avro object container file with header metadata exactly `avro.schema` and
 * `avro.codec`, like Java Paimon.
 *
 * Pass the schema as JSON (object or text), not as an avsc Type: it is stored verbatim
 * (`JSON.stringify` of an object keeps its key order), so `logicalType` and `default` survive.
 * `bytes` values must be Buffers; longs may be numbers (safe integers) or bigints.
 *
 * @throws FormatError naming the record index and field path when a record does not match the schema.
 */
export async function writeAvroFile(
  schema: AvroSchemaJson,
  records: Iterable<unknown> | AsyncIterable<unknown>,
  options: AvroWriteOptions = {},
): Promise<Uint8Array> {
  const schemaText = typeof schema === 'string' ? schema : JSON.stringify(schema);
  const type = avroTypeForSchema(schemaText);
  const codecName = options.codec ?? 'zstandard';
  const codec = getAvroCodec(codecName, { zstdLevel: options.zstdLevel });
  const blockSize = options.blockSize ?? DEFAULT_BLOCK_SIZE;
  const sync = options.syncMarker === undefined ? randomBytes(SYNC_SIZE) : toBuffer(options.syncMarker);
  if (sync.length !== SYNC_SIZE) throw new FormatError(`sync marker must be ${SYNC_SIZE} bytes, got ${sync.length}`);

  const parts: Buffer[] = [
    HEADER_TYPE.toBuffer({
      magic: MAGIC,
      meta: { 'avro.schema': Buffer.from(schemaText, 'utf8'), 'avro.codec': Buffer.from(codecName, 'utf8') },
      sync,
    }),
  ];
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const flush = async (): Promise<void> => {
    if (pending.length === 0) return;
    const data = toBuffer(await codec.compress(Buffer.concat(pending, pendingBytes)));
    parts.push(FRAMING_LONG.toBuffer(pending.length), FRAMING_LONG.toBuffer(data.length), data, sync);
    pending = [];
    pendingBytes = 0;
  };

  let index = 0;
  for await (const record of records) {
    let encoded: Buffer;
    try {
      encoded = type.toBuffer(record);
    } catch (err) {
      throw new FormatError(`cannot encode Avro record #${index}: ${describeInvalid(type, record, err)}`, {
        cause: err,
      });
    }
    pending.push(encoded);
    pendingBytes += encoded.length;
    index++;
    if (pendingBytes >= blockSize) await flush();
  }
  await flush();
  const out = Buffer.concat(parts);
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

/** Names the first invalid field of a record (avsc's own encode errors do not). */
function describeInvalid(type: avsc.Type, record: unknown, err: unknown): string {
  const problems: string[] = [];
  type.isValid(record, {
    errorHook: (path: string[], value: unknown, t: avsc.Type) => {
      if (problems.length < 3) {
        const shown = typeof value === 'bigint' ? `${value}n` : (JSON.stringify(value) ?? String(value));
        problems.push(`field '${path.join('.')}' = ${String(shown).slice(0, 80)} is not a valid ${t.typeName}`);
      }
    },
  });
  return problems.length > 0 ? problems.join('; ') : (err as Error).message;
}
