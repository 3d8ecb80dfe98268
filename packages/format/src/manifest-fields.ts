/**
 * Name-based field access on decoded manifest records, and the SimpleStats model shared by all
 * manifest kinds.
 *
 * Records are decoded with each file's own writer schema, so a field is looked up by name: a
 * nullable field missing from an older file reads as null, a required one raises
 * {@link CorruptFileError} naming the file and the field.
 */
import type { AvroRecord } from './avro-container.js';
import { readManifestRecords } from './manifest-records.js';
import { CorruptFileError, FormatError } from './errors.js';

/**
 * Min/max/null-count statistics of a row (`_PARTITION_STATS`, `_KEY_STATS`, `_VALUE_STATS`).
 * Min and max are serialized BinaryRows (see binary-row.ts), kept as raw bytes.
 */
export interface SimpleStats {
  readonly minValues: Uint8Array;
  readonly maxValues: Uint8Array;
  /** Per-column null counts (null entry = unknown); null when the file stores no counts. */
  readonly nullCounts: readonly (number | null)[] | null;
}

/** Serialized BinaryRow with zero fields: arity 0 + empty null-bit word. */
export const EMPTY_ROW_BYTES: Uint8Array = new Uint8Array(12);

/** Stats over zero columns, as Java writes for append tables' key stats. */
export const EMPTY_SIMPLE_STATS: SimpleStats = { minValues: EMPTY_ROW_BYTES, maxValues: EMPTY_ROW_BYTES, nullCounts: [] };

/** Reads one decoded record on behalf of a file, naming the file and field in errors. */
export class FieldReader {
  constructor(
    readonly path: string,
    private readonly data: AvroRecord,
    private readonly prefix = '',
    /**
     * Copy `bytes` values out of the decoded block (the default). Without copying they are views
     * into the block's decompressed buffer, which they keep alive: for callers that copy what
     * they keep themselves.
     */
    private readonly copyBytes = true,
  ) {}

  private missing(name: string, expected: string): never {
    throw new CorruptFileError(this.path, `required field '${this.prefix}${name}' is missing or not ${expected}`);
  }

  private raw(name: string): unknown {
    const v = this.data[name];
    return v === undefined ? null : v;
  }

  int(name: string): number {
    const v = this.raw(name);
    return typeof v === 'number' ? v : this.missing(name, 'an int');
  }

  optInt(name: string): number | null {
    const v = this.raw(name);
    if (v === null) return null;
    return typeof v === 'number' ? v : this.missing(name, 'an int');
  }

  /** A long exposed as number; values beyond 2^53 are rejected rather than rounded. */
  long(name: string): number {
    const v = this.raw(name);
    if (typeof v === 'number') return v;
    if (typeof v === 'bigint') {
      throw new CorruptFileError(this.path, `field '${this.prefix}${name}' = ${v} exceeds 2^53 and cannot be a number`);
    }
    return this.missing(name, 'a long');
  }

  optLong(name: string): number | null {
    return this.raw(name) === null ? null : this.long(name);
  }

  bigLong(name: string): bigint {
    const v = this.raw(name);
    if (typeof v === 'number' || typeof v === 'bigint') return BigInt(v);
    return this.missing(name, 'a long');
  }

  string(name: string): string {
    const v = this.raw(name);
    return typeof v === 'string' ? v : this.missing(name, 'a string');
  }

  optString(name: string): string | null {
    return this.raw(name) === null ? null : this.string(name);
  }

  bytes(name: string): Uint8Array {
    const v = this.raw(name);
    if (!(v instanceof Uint8Array)) return this.missing(name, 'bytes');
    // Copy out of the block's Buffer into a plain Uint8Array owned by the model.
    return this.copyBytes ? new Uint8Array(v) : v;
  }

  optBytes(name: string): Uint8Array | null {
    return this.raw(name) === null ? null : this.bytes(name);
  }

  stringArray(name: string): string[] {
    const v = this.raw(name);
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) return this.missing(name, 'an array of strings');
    return v as string[];
  }

  optStringArray(name: string): string[] | null {
    return this.raw(name) === null ? null : this.stringArray(name);
  }

  optArray(name: string): unknown[] | null {
    const v = this.raw(name);
    if (v === null) return null;
    return Array.isArray(v) ? v : this.missing(name, 'an array');
  }

  record(name: string): FieldReader {
    const v = this.raw(name);
    if (v === null || typeof v !== 'object') return this.missing(name, 'a record');
    return new FieldReader(this.path, v as AvroRecord, `${this.prefix}${name}.`, this.copyBytes);
  }

  optRecord(name: string): FieldReader | null {
    return this.raw(name) === null ? null : this.record(name);
  }

  stats(name: string): SimpleStats {
    const r = this.record(name);
    const counts = r.optArray('_NULL_COUNTS');
    return {
      minValues: r.bytes('_MIN_VALUES'),
      maxValues: r.bytes('_MAX_VALUES'),
      nullCounts:
        counts === null
          ? null
          : counts.map((c, i) => {
              if (c === null || typeof c === 'number') return c;
              throw new CorruptFileError(this.path, `'${this.prefix}${name}._NULL_COUNTS[${i}]' is not a safe long`);
            }),
    };
  }
}

/** avsc only accepts Buffers for `bytes`; wraps without copying. */
export function avroBytes(data: Uint8Array): Buffer {
  return Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

export function avroOptBytes(data: Uint8Array | null | undefined): Buffer | null {
  return data === null || data === undefined ? null : avroBytes(data);
}

/** SimpleStats as an Avro record value. */
export function statsToAvro(stats: SimpleStats): AvroRecord {
  return {
    _MIN_VALUES: avroBytes(stats.minValues),
    _MAX_VALUES: avroBytes(stats.maxValues),
    _NULL_COUNTS: stats.nullCounts === null ? null : [...stats.nullCounts],
  };
}

/** Checks the permanent `_VERSION` format identifier of a record. */
export function checkVersion(reader: FieldReader, expected: number, kind: string): void {
  const version = reader.int('_VERSION');
  if (version !== expected) {
    throw new FormatError(
      `${reader.path}: unsupported ${kind} format version ${version} (expected ${expected}); ` +
        (version < expected ? 'the table was written by a too old Paimon, recreate it' : 'written by a newer Paimon'),
    );
  }
}

/**
 * The part of `@tidemark/storage`'s `FileIO` the manifest readers and writers use. Declared
 * structurally so any FileIO (local, memory, S3) can be passed as is.
 */
export interface ManifestIO {
  read(path: string): Promise<Uint8Array>;
  write(path: string, data: Uint8Array): Promise<void>;
}

/**
 * Decodes every record of a small manifest file (a manifest list, an index manifest) into an array,
 * mapping each with `fromAvro`.
 */
export async function decodeAllRecords<T>(
  source: Uint8Array | AsyncIterable<Uint8Array>,
  path: string,
  fromAvro: (record: AvroRecord, path: string) => T,
): Promise<T[]> {
  const out: T[] = [];
  for await (const record of readManifestRecords(source, path)) out.push(fromAvro(record, path));
  return out;
}

/** Writes an encoded manifest file to `path`; returns its size (for the referencing metadata). */
export async function writeEncodedTo(io: Pick<ManifestIO, 'write'>, path: string, encoded: Promise<Uint8Array>): Promise<number> {
  const bytes = await encoded;
  await io.write(path, bytes);
  return bytes.length;
}
