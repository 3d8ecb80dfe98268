/**
 * Data manifest entries decoded straight from the Avro block bytes, without avsc building a
 * record object (and nested objects, arrays and buffers) for every field of every entry.
 *
 * The decoder is compiled from each file's own writer schema and finds fields by name, so
 * Java-written manifests of any Paimon version (other field sets and orders, extra fields) decode
 * as with the avsc path; a writer schema it cannot follow falls back to avsc. It gives the same
 * values and raises the same errors as {@link manifestEntryFromAvro} would.
 *
 * For planning it can also (1) hand the raw partition bytes to a callback before the rest of the
 * entry is decoded, so entries of other partitions cost a skip, and (2) keep `_KEY_STATS` and
 * `_VALUE_STATS` as {@link EncodedSimpleStats}, decoded only when read.
 */
import { avroBlockRecords, avroTypeForSchema, readAvroBlocks, type AvroRecord } from './avro-container.js';
import { AvroBinaryError, AvroCursor, compileAvroSchema, isScalarType, type AvroBinaryType } from './avro-binary.js';
import { CorruptFileError, FormatError } from './errors.js';
import { EMPTY_ROW_BYTES, EMPTY_SIMPLE_STATS, type SimpleStats } from './manifest-fields.js';
import { readManifestRecords } from './manifest-records.js';
import { MANIFEST_FORMAT_VERSION } from './manifest-schemas.js';
import { ByteArena, EncodedSimpleStats, StatsLayout } from './manifest-stats.js';
import { isOrc } from './orc-records.js';
import type { DataFileMeta, FileKind, ManifestEntry } from './data-file-meta.js';

/** Options of {@link decodeManifestEntriesFast}. */
export interface ManifestEntryDecodeOptions {
  /** As in `ManifestDecodeOptions`: copy byte fields (default true) or return views into the block. */
  readonly copyBytes?: boolean;
  /**
   * Keep `keyStats` and `valueStats` as {@link EncodedSimpleStats} (views of the block unless
   * `copyBytes`) instead of decoding them. Stats equal to the empty stats of append tables' keys
   * are returned as `EMPTY_SIMPLE_STATS` either way, and with views empty key rows as
   * `EMPTY_ROW_BYTES`.
   */
  readonly lazyStats?: boolean;
  /**
   * Sees the partition BinaryRow bytes `block[start, end)` of each entry before anything after it
   * is decoded. Returns the array to store as the entry's `partition` (e.g. one shared copy per
   * partition), or undefined to drop the entry.
   */
  readonly partition?: (block: Uint8Array, start: number, end: number) => Uint8Array | undefined;
  /** Drops entries whose bucket it rejects, before the file metadata is decoded. */
  readonly acceptBucket?: (bucket: number) => boolean;
  /**
   * With `lazyStats`: copy encoded stats, key rows, embedded indexes and (without a `partition`
   * callback) partitions into this arena (empty
   * rows and stats stay the shared constants), so entries keep no view of the manifest block and
   * cost one small object per stats record. Overrides `copyBytes` for those fields.
   */
  readonly arena?: ByteArena;
}

/** Turns one avsc-decoded record into an entry (the slow path, for schemas not compiled here). */
export type ManifestEntryFromRecord = (record: AvroRecord, path: string) => ManifestEntry;

// Slots of the fields the models read (exported for the walker in manifest-entry-walker.ts). Top level:
export const T_VERSION = 0;
export const T_KIND = 1;
export const T_PARTITION = 2;
export const T_BUCKET = 3;
export const T_TOTAL_BUCKETS = 4;
export const T_FILE = 5;
export const TOP_NAMES = ['_VERSION', '_KIND', '_PARTITION', '_BUCKET', '_TOTAL_BUCKETS', '_FILE'];
// `_FILE`:
export const F_NAME = 0;
export const F_SIZE = 1;
export const F_ROWS = 2;
export const F_MIN_KEY = 3;
export const F_MAX_KEY = 4;
export const F_KEY_STATS = 5;
export const F_VALUE_STATS = 6;
export const F_MIN_SEQ = 7;
export const F_MAX_SEQ = 8;
export const F_SCHEMA_ID = 9;
export const F_LEVEL = 10;
export const F_EXTRA_FILES = 11;
export const F_CREATION_TIME = 12;
export const F_DELETE_ROWS = 13;
export const F_EMBEDDED_INDEX = 14;
export const F_SOURCE = 15;
export const F_STATS_COLS = 16;
export const F_EXTERNAL_PATH = 17;
export const F_FIRST_ROW_ID = 18;
export const F_WRITE_COLS = 19;
export const F_WRITE_COLS_SEQ = 20;
export const FILE_NAMES = [
  '_FILE_NAME',
  '_FILE_SIZE',
  '_ROW_COUNT',
  '_MIN_KEY',
  '_MAX_KEY',
  '_KEY_STATS',
  '_VALUE_STATS',
  '_MIN_SEQUENCE_NUMBER',
  '_MAX_SEQUENCE_NUMBER',
  '_SCHEMA_ID',
  '_LEVEL',
  '_EXTRA_FILES',
  '_CREATION_TIME',
  '_DELETE_ROW_COUNT',
  '_EMBEDDED_FILE_INDEX',
  '_FILE_SOURCE',
  '_VALUE_STATS_COLS',
  '_EXTERNAL_PATH',
  '_FIRST_ROW_ID',
  '_WRITE_COLS',
  '_WRITE_COLS_SEQUENCES',
];

/** One field of the writer schema: its type and the slot it fills (-1: skipped). */
export interface FieldStep {
  readonly type: AvroBinaryType;
  readonly slot: number;
  /** Stats fields only. */
  readonly stats: StatsLayout | null;
}

/** A writer schema compiled for entry decoding. */
export interface EntryLayout {
  readonly top: readonly FieldStep[];
  readonly file: readonly FieldStep[];
  /** Index in `top` of `_FILE`, -1 when absent. */
  readonly fileIndex: number;
}

const layoutCache = new Map<string, EntryLayout | null>();
const LAYOUT_CACHE_LIMIT = 64;

/** The compiled layout of a writer schema, or null to use avsc. Cached by schema text. */
export function entryLayout(schemaText: string, schema: unknown): EntryLayout | null {
  let layout = layoutCache.get(schemaText);
  if (layout === undefined) {
    layout = compileLayout(schema);
    if (layoutCache.size >= LAYOUT_CACHE_LIMIT) layoutCache.clear();
    layoutCache.set(schemaText, layout);
  }
  return layout;
}

function compileLayout(schema: unknown): EntryLayout | null {
  const root = compileAvroSchema(schema);
  if (root === null || root.kind !== 'record') return null;
  const top: FieldStep[] = [];
  let file: FieldStep[] = [];
  let fileIndex = -1;
  for (const f of root.fields) {
    const slot = TOP_NAMES.indexOf(f.name);
    if (slot === T_FILE) {
      if (f.type.kind !== 'record') return null;
      fileIndex = top.length;
      file = [];
      for (const g of f.type.fields) {
        const fslot = FILE_NAMES.indexOf(g.name);
        if (fslot === F_KEY_STATS || fslot === F_VALUE_STATS) {
          const stats = StatsLayout.of(g.type);
          if (stats === null) return null;
          file.push({ type: g.type, slot: fslot, stats });
        } else {
          if (fslot >= 0 && !isScalarType(g.type)) return null;
          file.push({ type: g.type, slot: fslot, stats: null });
        }
      }
      top.push({ type: f.type, slot, stats: null });
    } else {
      if (slot >= 0 && !isScalarType(f.type)) return null;
      top.push({ type: f.type, slot, stats: null });
    }
  }
  return { top, file, fileIndex };
}

/** Raises the errors FieldReader raises for a value of the wrong kind. */
class EntryChecks {
  constructor(readonly path: string) {}

  missing(name: string, expected: string): never {
    throw new CorruptFileError(this.path, `required field '${name}' is missing or not ${expected}`);
  }

  int(v: unknown, name: string): number {
    return typeof v === 'number' ? v : this.missing(name, 'an int');
  }

  optInt(v: unknown, name: string): number | null {
    return v === null || v === undefined ? null : this.int(v, name);
  }

  long(v: unknown, name: string): number {
    if (typeof v === 'number') return v;
    if (typeof v === 'bigint') throw new CorruptFileError(this.path, `field '${name}' = ${v} exceeds 2^53 and cannot be a number`);
    return this.missing(name, 'a long');
  }

  optLong(v: unknown, name: string): number | null {
    return v === null || v === undefined ? null : this.long(v, name);
  }

  bigLong(v: unknown, name: string): bigint {
    if (typeof v === 'number' || typeof v === 'bigint') return BigInt(v);
    return this.missing(name, 'a long');
  }

  string(v: unknown, name: string): string {
    return typeof v === 'string' ? v : this.missing(name, 'a string');
  }

  optString(v: unknown, name: string): string | null {
    return v === null || v === undefined ? null : this.string(v, name);
  }

  bytes(v: unknown, name: string, copy: boolean): Uint8Array {
    if (!(v instanceof Uint8Array)) return this.missing(name, 'bytes');
    return copy ? new Uint8Array(v) : v;
  }

  optBytes(v: unknown, name: string, copy: boolean): Uint8Array | null {
    return v === null || v === undefined ? null : this.bytes(v, name, copy);
  }

  stringArray(v: unknown, name: string): string[] {
    if (!Array.isArray(v)) return this.missing(name, 'an array of strings');
    for (let i = 0; i < v.length; i++) if (typeof v[i] !== 'string') return this.missing(name, 'an array of strings');
    return v as string[];
  }

  optStringArray(v: unknown, name: string): string[] | null {
    return v === null || v === undefined ? null : this.stringArray(v, name);
  }
}

function kindFromInt(kind: number, path: string): FileKind {
  if (kind === 0) return 'ADD';
  if (kind === 1) return 'DELETE';
  throw new FormatError(`${path}: unknown manifest entry _KIND ${kind} (expected 0 = ADD or 1 = DELETE)`);
}

function isEmptyRow(buf: Uint8Array, start: number, end: number): boolean {
  if (end - start !== EMPTY_ROW_BYTES.length) return false;
  for (let i = start; i < end; i++) if (buf[i] !== 0) return false;
  return true;
}

const NO_STRINGS: readonly string[] = Object.freeze([]);

/**
 * Sets every slot to null. A loop the JIT inlines: `Array.prototype.fill` is a call into the
 * runtime for these arrays, and it ran twice per entry.
 */
function clear(slots: unknown[]): void {
  for (let i = 0; i < slots.length; i++) slots[i] = null;
}

// How a `_FILE` field is read, decided once per decoder from the layout and the options:
/** Not a field the models read. */
const MODE_SKIP = 0;
/** `_KEY_STATS` / `_VALUE_STATS`: see `BlockDecoder.stats`. */
const MODE_STATS = 1;
/** Key rows and the embedded index with lazy stats: the shared empty row, an arena copy or a block view. */
const MODE_LAZY_BYTES = 2;
const MODE_SCALAR = 3;
/** `_EXTRA_FILES` with lazy stats (planning): an empty list is the shared empty array, not a new one per entry. */
const MODE_STRING_LIST = 4;

/** An Avro array of scalars, or the shared empty array when it has no items. */
function stringList(c: AvroCursor, type: AvroBinaryType): unknown {
  if (type.kind !== 'array') return c.scalar(type);
  let out: unknown[] | null = null;
  for (let n = c.blockCount(); n > 0; n = c.blockCount()) for (let i = 0; i < n; i++) (out ??= []).push(c.scalar(type.items));
  return out ?? NO_STRINGS;
}

/** Decodes the entries of one block with a compiled layout. */
export class BlockDecoder {
  private readonly top: unknown[] = TOP_NAMES.map(() => null);
  private readonly file: unknown[] = FILE_NAMES.map(() => null);
  /** How each `_FILE` field of the layout is read with these options (`MODE_*`). */
  private readonly fileModes: Uint8Array;
  private readonly checks: EntryChecks;
  private readonly copy: boolean;
  private readonly lazy: boolean;
  private readonly arena: ByteArena | undefined;

  constructor(
    private readonly layout: EntryLayout,
    private readonly path: string,
    private readonly options: ManifestEntryDecodeOptions,
  ) {
    this.checks = new EntryChecks(path);
    this.copy = options.copyBytes ?? true;
    this.lazy = options.lazyStats ?? false;
    this.arena = options.arena;
    const lazyRows = this.lazy && (!this.copy || this.arena !== undefined);
    this.fileModes = Uint8Array.from(layout.file, (step) =>
      step.slot < 0
        ? MODE_SKIP
        : step.stats !== null
          ? MODE_STATS
          : lazyRows && (step.slot === F_MIN_KEY || step.slot === F_MAX_KEY || step.slot === F_EMBEDDED_INDEX)
            ? MODE_LAZY_BYTES
            : this.lazy && step.slot === F_EXTRA_FILES && step.type.kind === 'array'
              ? MODE_STRING_LIST
              : MODE_SCALAR,
    );
  }

  /** Appends the kept entries of a block to `out`, in order. */
  entries(blockIndex: number, count: number, data: Buffer, out: ManifestEntry[]): void {
    const c = new AvroCursor(data, 0, data.length);
    for (let i = 0; i < count; i++) {
      let entry: ManifestEntry | null;
      try {
        entry = this.entry(c);
      } catch (err) {
        if (err instanceof AvroBinaryError || err instanceof RangeError) {
          throw new CorruptFileError(this.path, `cannot decode record ${i} of block ${blockIndex}: ${err.message}`, { cause: err });
        }
        throw err;
      }
      if (c.pos > data.length) throw new CorruptFileError(this.path, `block ${blockIndex} ends inside record ${i} of ${count}`);
      if (entry !== null) out.push(entry);
    }
    if (c.pos !== data.length) {
      throw new CorruptFileError(this.path, `block ${blockIndex} has ${data.length - c.pos} bytes left after its ${count} records`);
    }
  }

  /**
   * The `_FILE` record of this layout at `buf[pos..]`, one that a walk already checked: what
   * {@link entries} would give for it with these options (with `lazyStats` and without `copyBytes`
   * or an arena, stats and key rows view `buf`).
   */
  fileAt(buf: Buffer, pos: number): DataFileMeta {
    this.readFile(new AvroCursor(buf, pos, buf.length), this.layout.file);
    return this.fileMeta();
  }

  /** One entry, or null when a filter dropped it (its bytes are skipped). */
  private entry(c: AvroCursor): ManifestEntry | null {
    const { top, layout, checks } = this;
    clear(top);
    let partition: Uint8Array | undefined;
    let dropped = false;
    const steps = layout.top;
    for (let s = 0; s < steps.length; s++) {
      const step = steps[s]!;
      if (dropped || step.slot < 0) {
        c.skip(step.type);
      } else if (step.slot === T_FILE) {
        this.readFile(c, layout.file);
        top[T_FILE] = true;
      } else if (step.slot === T_PARTITION && step.type.kind === 'bytes' && this.options.partition !== undefined) {
        const start = c.skipBytes();
        partition = this.options.partition(c.buf, start, c.pos);
        if (partition === undefined) dropped = true;
        top[T_PARTITION] = true;
      } else if (step.slot === T_PARTITION && step.type.kind === 'bytes' && this.arena !== undefined && this.lazy) {
        const start = c.skipBytes();
        partition = this.arena.view(c.buf, start, c.pos);
        top[T_PARTITION] = true;
      } else {
        const v = c.scalar(step.type);
        top[step.slot] = v;
        if (step.slot === T_BUCKET && this.options.acceptBucket !== undefined && typeof v === 'number' && !this.options.acceptBucket(v)) {
          dropped = true;
        }
      }
    }
    if (dropped) return null;
    const version = checks.int(top[T_VERSION], '_VERSION');
    if (version !== MANIFEST_FORMAT_VERSION) {
      throw new FormatError(
        `${this.path}: unsupported data manifest format version ${version} (expected ${MANIFEST_FORMAT_VERSION}); ` +
          (version < MANIFEST_FORMAT_VERSION ? 'the table was written by a too old Paimon, recreate it' : 'written by a newer Paimon'),
      );
    }
    const kind = kindFromInt(checks.int(top[T_KIND], '_KIND'), this.path);
    if (partition === undefined) {
      partition = checks.bytes(top[T_PARTITION], '_PARTITION', this.copy);
      if (this.options.partition !== undefined) {
        // A writer schema with another partition type: filter the decoded bytes instead.
        const kept = this.options.partition(partition, 0, partition.length);
        if (kept === undefined) return null;
        partition = kept;
      }
    }
    const bucket = checks.int(top[T_BUCKET], '_BUCKET');
    if (this.options.acceptBucket !== undefined && !this.options.acceptBucket(bucket)) return null;
    const totalBuckets = checks.int(top[T_TOTAL_BUCKETS], '_TOTAL_BUCKETS');
    if (top[T_FILE] !== true) checks.missing('_FILE', 'a record');
    return { kind, partition, bucket, totalBuckets, file: this.fileMeta() };
  }

  private readFile(c: AvroCursor, steps: readonly FieldStep[]): void {
    const file = this.file;
    const modes = this.fileModes;
    clear(file);
    for (let s = 0; s < steps.length; s++) {
      const step = steps[s]!;
      switch (modes[s]) {
        case MODE_SKIP:
          c.skip(step.type);
          break;
        case MODE_STATS:
          file[step.slot] = this.stats(c, step.stats!, FILE_NAMES[step.slot]!);
          break;
        case MODE_LAZY_BYTES:
          file[step.slot] = this.lazyBytes(c, step.type);
          break;
        case MODE_STRING_LIST:
          file[step.slot] = stringList(c, step.type);
          break;
        default:
          file[step.slot] = c.scalar(step.type);
      }
    }
  }

  /** A key row or embedded index: the shared empty row, an arena copy or a block view. */
  private lazyBytes(c: AvroCursor, type: AvroBinaryType): unknown {
    let t = type;
    if (t.kind === 'union') {
      t = t.branches[c.branch(t.branches.length)]!;
      if (t.kind === 'null') return null;
    }
    if (t.kind !== 'bytes') return c.scalar(t);
    const start = c.skipBytes();
    if (isEmptyRow(c.buf, start, c.pos)) return EMPTY_ROW_BYTES;
    return this.arena !== undefined ? this.arena.view(c.buf, start, c.pos) : c.buf.subarray(start, c.pos);
  }

  private stats(c: AvroCursor, layout: StatsLayout, name: string): SimpleStats {
    const start = c.pos;
    if (this.lazy) {
      const bad = layout.skipChecked(c);
      if (bad >= 0) throw new CorruptFileError(this.path, `'_FILE.${name}._NULL_COUNTS[${bad}]' is not a safe long`);
      const end = c.pos;
      if (layout.isEmpty(c.buf, start, end) ?? isEmptyStats(c.buf, start, end, layout)) return EMPTY_SIMPLE_STATS;
      if (this.arena !== undefined) {
        const { buf, offset } = this.arena.copy(c.buf, start, end);
        return new EncodedSimpleStats(buf, offset, layout);
      }
      if (this.copy) return new EncodedSimpleStats(Buffer.from(c.buf.subarray(start, end)), 0, layout);
      return new EncodedSimpleStats(c.buf, start, layout);
    }
    c.skip(layout.type);
    const { minValues, maxValues, nullCounts } = layout.decode(c.buf, start);
    if (nullCounts !== null) {
      for (let i = 0; i < nullCounts.length; i++) {
        const n = nullCounts[i];
        if (n !== null && typeof n !== 'number')
          throw new CorruptFileError(this.path, `'_FILE.${name}._NULL_COUNTS[${i}]' is not a safe long`);
      }
    }
    return {
      minValues: this.copy ? new Uint8Array(minValues) : minValues,
      maxValues: this.copy ? new Uint8Array(maxValues) : maxValues,
      nullCounts,
    };
  }

  /** True for byte values {@link lazyBytes} already placed (shared empty row, arena copy, view). */
  private lazyKept(v: unknown): boolean {
    return v === EMPTY_ROW_BYTES || (v instanceof Uint8Array && this.lazy && (!this.copy || this.arena !== undefined));
  }

  /** With `lazyStats` (planning), empty lists are one shared array: a plan keeps one per live file. */
  private extraFiles(list: readonly string[]): readonly string[] {
    return list.length === 0 && this.lazy ? NO_STRINGS : list;
  }

  private fileMeta(): DataFileMeta {
    const f = this.file;
    const k = this.checks;
    const copy = this.copy;
    const sequences = f[F_WRITE_COLS_SEQ];
    if (sequences !== null && sequences !== undefined && !Array.isArray(sequences)) k.missing('_FILE._WRITE_COLS_SEQUENCES', 'an array');
    return {
      fileName: k.string(f[F_NAME], '_FILE._FILE_NAME'),
      fileSize: k.long(f[F_SIZE], '_FILE._FILE_SIZE'),
      rowCount: k.long(f[F_ROWS], '_FILE._ROW_COUNT'),
      minKey: this.lazyKept(f[F_MIN_KEY]) ? (f[F_MIN_KEY] as Uint8Array) : k.bytes(f[F_MIN_KEY], '_FILE._MIN_KEY', copy),
      maxKey: this.lazyKept(f[F_MAX_KEY]) ? (f[F_MAX_KEY] as Uint8Array) : k.bytes(f[F_MAX_KEY], '_FILE._MAX_KEY', copy),
      keyStats: (f[F_KEY_STATS] as SimpleStats | null) ?? k.missing('_FILE._KEY_STATS', 'a record'),
      valueStats: (f[F_VALUE_STATS] as SimpleStats | null) ?? k.missing('_FILE._VALUE_STATS', 'a record'),
      minSequenceNumber: k.bigLong(f[F_MIN_SEQ], '_FILE._MIN_SEQUENCE_NUMBER'),
      maxSequenceNumber: k.bigLong(f[F_MAX_SEQ], '_FILE._MAX_SEQUENCE_NUMBER'),
      schemaId: k.long(f[F_SCHEMA_ID], '_FILE._SCHEMA_ID'),
      level: k.int(f[F_LEVEL], '_FILE._LEVEL'),
      extraFiles: this.extraFiles(k.stringArray(f[F_EXTRA_FILES], '_FILE._EXTRA_FILES')),
      creationTime: k.optLong(f[F_CREATION_TIME], '_FILE._CREATION_TIME'),
      deleteRowCount: k.optLong(f[F_DELETE_ROWS], '_FILE._DELETE_ROW_COUNT'),
      embeddedIndex: this.lazyKept(f[F_EMBEDDED_INDEX])
        ? (f[F_EMBEDDED_INDEX] as Uint8Array)
        : k.optBytes(f[F_EMBEDDED_INDEX], '_FILE._EMBEDDED_FILE_INDEX', copy),
      fileSource: k.optInt(f[F_SOURCE], '_FILE._FILE_SOURCE'),
      valueStatsCols: k.optStringArray(f[F_STATS_COLS], '_FILE._VALUE_STATS_COLS'),
      externalPath: k.optString(f[F_EXTERNAL_PATH], '_FILE._EXTERNAL_PATH'),
      firstRowId: k.optLong(f[F_FIRST_ROW_ID], '_FILE._FIRST_ROW_ID'),
      writeCols: k.optStringArray(f[F_WRITE_COLS], '_FILE._WRITE_COLS'),
      writeColsSequences:
        sequences === null || sequences === undefined ? null : (sequences as unknown[]).map((s) => BigInt(s as number | bigint)),
    };
  }
}

/** Empty stats (empty min and max rows, no null counts) in a layout with more fields: decoded to look. */
function isEmptyStats(buf: Buffer, start: number, end: number, layout: StatsLayout): boolean {
  // Two 12-byte rows (1-byte length each) plus at most a union branch and an empty array.
  if (end - start > 30 || end - start < 26) return false;
  const { minValues, maxValues, nullCounts } = layout.decode(buf, start);
  return (
    nullCounts !== null &&
    nullCounts.length === 0 &&
    isEmptyRow(minValues, 0, minValues.length) &&
    isEmptyRow(maxValues, 0, maxValues.length)
  );
}

/**
 * Streams the entries of a data manifest (Avro or ORC) from its bytes, one array per Avro block
 * (empty ones left out), decoding Avro blocks with
 * a decoder compiled from the writer schema and everything else with `fromRecord` on avsc (or
 * ORC) records. `source` as chunks always takes the record path.
 */
export async function* decodeManifestEntriesFast(
  source: Uint8Array | AsyncIterable<Uint8Array>,
  path: string,
  options: ManifestEntryDecodeOptions,
  fromRecord: ManifestEntryFromRecord,
): AsyncGenerator<ManifestEntry[], void, undefined> {
  if (!(source instanceof Uint8Array) || isOrc(source)) {
    let batch: ManifestEntry[] = [];
    for await (const record of readManifestRecords(source, path)) {
      const entry = filtered(fromRecord(record, path), options);
      if (entry !== null) batch.push(entry);
      if (batch.length >= 1024) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
    return;
  }
  let decoder: BlockDecoder | null = null;
  let avscType: ReturnType<typeof avroTypeForSchema> | null = null;
  for await (const block of readAvroBlocks(source, { path })) {
    if (decoder === null && avscType === null) {
      const layout = entryLayout(block.header.schemaText, block.header.schema);
      if (layout !== null) decoder = new BlockDecoder(layout, path, options);
      else {
        try {
          avscType = avroTypeForSchema(block.header.schemaText);
        } catch (err) {
          throw new CorruptFileError(path, `invalid writer schema: ${(err as Error).message}`, { cause: err });
        }
      }
    }
    const batch: ManifestEntry[] = [];
    if (decoder !== null) decoder.entries(block.index, block.count, block.data, batch);
    else {
      for (const record of avroBlockRecords(block, avscType!, path)) {
        const entry = filtered(fromRecord(record, path), options);
        if (entry !== null) batch.push(entry);
      }
    }
    if (batch.length > 0) yield batch;
  }
}

/** Applies the partition and bucket callbacks to an entry decoded by the record path. */
function filtered(entry: ManifestEntry, options: ManifestEntryDecodeOptions): ManifestEntry | null {
  let partition = entry.partition;
  if (options.partition !== undefined) {
    const kept = options.partition(partition, 0, partition.length);
    if (kept === undefined) return null;
    partition = kept;
  }
  if (options.acceptBucket !== undefined && !options.acceptBucket(entry.bucket)) return null;
  return partition === entry.partition ? entry : { ...entry, partition };
}
