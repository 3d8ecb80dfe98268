/**
 * A walk over the entries of a data manifest's Avro block that builds no object: each entry's
 * fields are read into registers (typed arrays of values and byte extents), and a visitor looks at
 * them before the next entry overwrites them. Scan planning folds entries this way and keeps, per
 * live file, the raw bytes of its `_FILE` record, decoded into a {@link DataFileMeta} only when a
 * caller asks for the file ({@link ManifestEntryWalker.fileAt}).
 *
 * The walk runs a flat program compiled from the file's writer schema (the fields the decoder in
 * manifest-entry-decoder.ts knows, found by name, so any Paimon version's field set and order
 * works): one loop with a switch per Avro value, instead of a call per field and a JS value per
 * field. It checks what the decoder checks for every entry (lengths inside the block, required
 * fields not null, longs that must be numbers, `_VERSION`, `_KIND`, null counts safe longs), so a
 * plan that walks a corrupt manifest fails as the decoder would, naming the file.
 */
import type { AvroHeader } from './avro-container.js';
import { AvroBinaryError, AvroCursor, type AvroBinaryType } from './avro-binary.js';
import { CorruptFileError, FormatError } from './errors.js';
import type { DataFileMeta } from './manifest-entry.js';
import {
  BlockDecoder,
  FILE_NAMES,
  F_CREATION_TIME,
  F_DELETE_ROWS,
  F_EMBEDDED_INDEX,
  F_EXTERNAL_PATH,
  F_EXTRA_FILES,
  F_FIRST_ROW_ID,
  F_KEY_STATS,
  F_LEVEL,
  F_MAX_KEY,
  F_MAX_SEQ,
  F_MIN_KEY,
  F_MIN_SEQ,
  F_NAME,
  F_ROWS,
  F_SCHEMA_ID,
  F_SIZE,
  F_SOURCE,
  F_STATS_COLS,
  F_VALUE_STATS,
  F_WRITE_COLS,
  F_WRITE_COLS_SEQ,
  TOP_NAMES,
  T_BUCKET,
  T_FILE,
  T_KIND,
  T_PARTITION,
  T_TOTAL_BUCKETS,
  T_VERSION,
  entryLayout,
  type EntryLayout,
  type FieldStep,
} from './manifest-entry-decoder.js';
import { MANIFEST_FORMAT_VERSION } from './manifest-schemas.js';

/** Register of `_FILE` field `F_x` (top-level fields use their `T_x`). */
const FILE_BASE = TOP_NAMES.length;
const SLOTS = FILE_BASE + FILE_NAMES.length;

// Ops of the program, four int32 each: [op, register (-1: none), arg, arg2].
/** int, long or enum: its value into `vals` (NaN when not a safe integer); arg 1 = an int (range checked). */
const OP_VARINT = 0;
/** bytes or string: its extent. */
const OP_BYTES = 1;
/** `arg` bytes (boolean, float, double, fixed). */
const OP_FIXED = 2;
/** A union with null: arg = the null branch, arg2 = ops of the other branch (skipped when null). */
const OP_NULLABLE = 3;
/** An array of simple items (arg = `ITEM_*`, arg2 = its size for `ITEM_FIXED`): extent and item count. */
const OP_ARRAY = 4;
/** Start and end of a record whose fields follow. */
const OP_BEGIN = 5;
const OP_END = 6;
/** Any other value, skipped by the cursor (arg = index into the program's types): extent. */
const OP_GENERIC = 7;

const ITEM_VARINT = 0;
const ITEM_BYTES = 1;
const ITEM_FIXED = 2;
/** `["null", "long"]` items, checked to be safe longs (null counts): arg2 = the null branch. */
const ITEM_NULLABLE_LONG = 3;

/** Fields a {@link DataFileMeta} cannot be without (the decoder raises "required field ... is missing"). */
const REQUIRED_FILE = [
  F_NAME,
  F_SIZE,
  F_ROWS,
  F_MIN_KEY,
  F_MAX_KEY,
  F_KEY_STATS,
  F_VALUE_STATS,
  F_MIN_SEQ,
  F_MAX_SEQ,
  F_SCHEMA_ID,
  F_LEVEL,
  F_EXTRA_FILES,
];
/** Longs the model holds as numbers: a value beyond 2^53 is an error, as in the decoder. */
const NUMBER_LONGS = [F_SIZE, F_ROWS, F_SCHEMA_ID, F_CREATION_TIME, F_DELETE_ROWS, F_FIRST_ROW_ID, F_LEVEL, F_SOURCE];

const layoutWalkers = new WeakMap<EntryLayout, ManifestEntryWalker | null>();

/**
 * Walks the entries of data manifest blocks written with one writer schema. Not reentrant: the
 * registers describe the entry being visited.
 */
export class ManifestEntryWalker {
  /**
   * The walker of a manifest's writer schema, or null when the schema is one the walk does not
   * follow (then decode entries with `decodeManifestEntryBatches`, which falls back to avsc).
   * One walker per schema text in the process.
   */
  static forHeader(header: AvroHeader): ManifestEntryWalker | null {
    const layout = entryLayout(header.schemaText, header.schema);
    if (layout === null) return null;
    let walker = layoutWalkers.get(layout);
    if (walker === undefined) {
      const program = compile(layout);
      walker = program === null ? null : new ManifestEntryWalker(layout, program);
      layoutWalkers.set(layout, walker);
    }
    return walker;
  }

  /** Values of int and long registers (NaN when null or not a safe integer). */
  private readonly vals = new Float64Array(SLOTS).fill(Number.NaN);
  /** Extents of byte, string, array and record registers (-1 when null). */
  private readonly starts = new Int32Array(SLOTS).fill(-1);
  private readonly ends = new Int32Array(SLOTS).fill(-1);
  /** Items of array registers. */
  private readonly counts = new Int32Array(SLOTS);
  /** 1 where the register's value was null in the entry being visited. */
  private readonly nulls = new Uint8Array(SLOTS);
  private readonly decoder: BlockDecoder;
  private path = '';

  private readonly program: Int32Array;
  private readonly types: readonly AvroBinaryType[];
  /** 1 for registers a null value is an error in. */
  private readonly required: Uint8Array;

  private constructor(layout: EntryLayout, compiled: WalkProgram) {
    this.decoder = new BlockDecoder(layout, '', { copyBytes: false, lazyStats: true });
    this.program = compiled.program;
    this.types = compiled.types;
    this.required = compiled.required;
    // Registers of fields the schema lacks read as null for every entry.
    for (let r = 0; r < SLOTS; r++) if (compiled.present[r] === 0) this.nulls[r] = 1;
  }

  /** `_KIND`: 0 = ADD, 1 = DELETE. */
  get kind(): number {
    return this.vals[T_KIND]!;
  }
  get bucket(): number {
    return this.vals[T_BUCKET]!;
  }
  get totalBuckets(): number {
    return this.vals[T_TOTAL_BUCKETS]!;
  }
  /** Extent of the `_PARTITION` BinaryRow in the block. */
  get partitionStart(): number {
    return this.starts[T_PARTITION]!;
  }
  get partitionEnd(): number {
    return this.ends[T_PARTITION]!;
  }
  /** Extent of the `_FILE` record in the block (what {@link fileAt} decodes). */
  get fileStart(): number {
    return this.starts[T_FILE]!;
  }
  get fileEnd(): number {
    return this.ends[T_FILE]!;
  }
  /** Extent of the UTF-8 bytes of `_FILE_NAME`. */
  get nameStart(): number {
    return this.starts[FILE_BASE + F_NAME]!;
  }
  get nameEnd(): number {
    return this.ends[FILE_BASE + F_NAME]!;
  }
  get level(): number {
    return this.vals[FILE_BASE + F_LEVEL]!;
  }
  get rowCount(): number {
    return this.vals[FILE_BASE + F_ROWS]!;
  }
  get schemaId(): number {
    return this.vals[FILE_BASE + F_SCHEMA_ID]!;
  }
  /** `_MIN_SEQUENCE_NUMBER`, or NaN when it is not a safe integer (decode the file to get it). */
  get minSequenceNumber(): number {
    return this.vals[FILE_BASE + F_MIN_SEQ]!;
  }
  /**
   * Whether the file's identity is its name and level alone: no extra files, embedded index or
   * external path (see `fileEntryIdentity`).
   */
  get plainIdentity(): boolean {
    return (
      this.counts[FILE_BASE + F_EXTRA_FILES] === 0 &&
      this.nulls[FILE_BASE + F_EMBEDDED_INDEX] === 1 &&
      this.nulls[FILE_BASE + F_EXTERNAL_PATH] === 1
    );
  }

  /**
   * Walks entries `from` .. `count - 1` of a block whose entry `from` starts at `pos`, calling
   * `visit` after each with the registers filled. When `visit` returns false the walk stops before
   * that entry is counted: the result is its index, and {@link resumeAt} its start, to walk it
   * again later (e.g. after an await). Returns `count` when the block is done.
   *
   * @throws CorruptFileError naming `path` for bytes that are not entries of this schema.
   * @throws FormatError for an unsupported `_VERSION` or an unknown `_KIND`.
   */
  walk(data: Buffer, count: number, blockIndex: number, path: string, visit: (w: this) => boolean, from = 0, pos = 0): number {
    this.path = path;
    const end = data.length;
    for (let i = from; i < count; i++) {
      const start = pos;
      try {
        pos = this.entry(data, pos, end);
      } catch (err) {
        if (err instanceof AvroBinaryError || err instanceof RangeError) {
          throw new CorruptFileError(path, `cannot decode record ${i} of block ${blockIndex}: ${err.message}`, { cause: err });
        }
        throw err;
      }
      if (pos > end) throw new CorruptFileError(path, `block ${blockIndex} ends inside record ${i} of ${count}`);
      this.check();
      if (!visit(this)) {
        this.resumeAt = start;
        return i;
      }
    }
    if (pos !== end) throw new CorruptFileError(path, `block ${blockIndex} has ${end - pos} bytes left after its ${count} records`);
    this.resumeAt = pos;
    return count;
  }

  /** Where the entry a visitor stopped at starts (see {@link walk}). */
  resumeAt = 0;

  /** The `_FILE` record of this schema at `buf[pos..]` as a {@link DataFileMeta} (stats and key rows view `buf`). */
  fileAt(buf: Buffer, pos: number): DataFileMeta {
    return this.decoder.fileAt(buf, pos);
  }

  /** Reads one entry at `pos` into the registers; returns its end. */
  private entry(buf: Buffer, pos: number, end: number): number {
    const p = this.program;
    const { vals, starts, ends, nulls } = this;
    const n = p.length;
    for (let i = 0; i < n; i += 4) {
      const r = p[i + 1]!;
      switch (p[i]) {
        case OP_VARINT: {
          // Most values are one byte: read inline, longer ones by the call.
          const b = buf[pos]!;
          let v: number;
          if (b < 0x80) {
            v = (b >>> 1) ^ -(b & 1);
            pos++;
          } else {
            v = this.long(buf, pos, end);
            pos = this.next;
            if (p[i + 2] === 1 && !(v <= 0x7fffffff && v >= -0x80000000))
              throw new AvroBinaryError(`int varint out of range at offset ${pos}`);
          }
          if (r >= 0) vals[r] = v;
          break;
        }
        case OP_BYTES: {
          const b = buf[pos]!;
          let len: number;
          if (b < 0x80) {
            len = (b >>> 1) ^ -(b & 1);
            pos++;
          } else {
            len = this.long(buf, pos, end);
            pos = this.next;
          }
          if (!(len >= 0 && pos + len <= end))
            throw new AvroBinaryError(`length ${len} at offset ${pos} runs past the end of the block (${end})`);
          if (r >= 0) {
            starts[r] = pos;
            ends[r] = pos + len;
          }
          pos += len;
          break;
        }
        case OP_FIXED:
          pos += p[i + 2]!;
          break;
        case OP_NULLABLE: {
          // Branch 0 or 1: the byte 0 or 2.
          const b = buf[pos++]!;
          const branch = b === 0 ? 0 : b === 2 ? 1 : -1;
          if (branch < 0) throw new AvroBinaryError(`union branch ${branch} at offset ${pos} out of range (2 branches)`);
          if (branch === p[i + 2]) {
            if (r >= 0) this.setNull(r);
            i += 4 * p[i + 3]!;
          } else if (r >= 0) nulls[r] = 0;
          break;
        }
        case OP_ARRAY:
          pos = this.array(buf, pos, end, p[i + 2]!, p[i + 3]!, r);
          break;
        case OP_BEGIN:
          starts[r] = pos;
          break;
        case OP_END:
          ends[r] = pos;
          break;
        default:
          pos = this.generic(buf, pos, end, p[i + 2]!, r);
      }
    }
    return pos;
  }

  /** Register `r` read as null in this entry: an error when the field is required. */
  private setNull(r: number): void {
    if (this.required[r] === 1) this.missing(r);
    this.nulls[r] = 1;
    this.vals[r] = Number.NaN;
    this.starts[r] = -1;
    this.ends[r] = -1;
    this.counts[r] = 0;
  }

  /**
   * Reads the array at `pos` (items of `kind`, `arg` as in {@link OP_ARRAY}) into register `r`
   * (-1: not kept): its extent and item count. Returns its end.
   */
  private array(buf: Buffer, pos: number, end: number, kind: number, arg: number, r: number): number {
    const start = pos;
    let items = 0;
    for (;;) {
      let blockItems = this.long(buf, pos, end);
      pos = this.next;
      if (blockItems < 0) {
        // A negative count is followed by the block's byte size.
        blockItems = -blockItems;
        this.long(buf, pos, end);
        pos = this.next;
      }
      // Every item takes at least one byte: a larger count is garbage, and looping over it would hang.
      if (!(blockItems <= end - pos))
        throw new AvroBinaryError(`array block count ${blockItems} at offset ${pos} exceeds the ${end - pos} bytes left`);
      if (blockItems === 0) break;
      for (let k = 0; k < blockItems; k++) {
        if (kind === ITEM_VARINT) {
          this.long(buf, pos, end);
          pos = this.next;
        } else if (kind === ITEM_BYTES) {
          const len = this.long(buf, pos, end);
          pos = this.next;
          if (!(len >= 0 && pos + len <= end))
            throw new AvroBinaryError(`length ${len} at offset ${pos} runs past the end of the block (${end})`);
          pos += len;
        } else if (kind === ITEM_FIXED) {
          pos += arg;
        } else {
          const branch = buf[pos++]!;
          if (branch !== 0 && branch !== 2) throw new AvroBinaryError(`union branch at offset ${pos - 1} out of range (2 branches)`);
          if (branch >>> 1 !== (arg & 1)) {
            const v = this.long(buf, pos, end);
            pos = this.next;
            if (Number.isNaN(v)) this.unsafeNullCount(arg >>> 1, items + k);
          }
        }
      }
      items += blockItems;
    }
    if (r >= 0) {
      this.starts[r] = start;
      this.ends[r] = pos;
      this.counts[r] = items;
    }
    return pos;
  }

  /** Skips the value of `types[type]` at `pos` with the cursor, its extent into register `r` (-1: not kept). */
  private generic(buf: Buffer, pos: number, end: number, type: number, r: number): number {
    const c = new AvroCursor(buf, pos, end);
    c.skip(this.types[type]!);
    if (r >= 0) {
      this.starts[r] = pos;
      this.ends[r] = c.pos;
    }
    return c.pos;
  }

  /** End of the varint read by {@link long}. */
  private next = 0;

  /**
   * The zigzag varint at `buf[pos]` as a number, NaN when it is not a safe integer; its end goes to
   * {@link next}. Past the block's end it reads zeros and stops (the walk then fails on `pos > end`).
   */
  private long(buf: Buffer, pos: number, end: number): number {
    let b = buf[pos++]!;
    if ((b & 0x80) === 0) {
      this.next = pos;
      return (b >>> 1) ^ -(b & 1);
    }
    // Up to 7 bytes (49 bits) add up exactly in a double.
    let v = b & 0x7f;
    let mul = 128;
    for (let k = 1; k < 7; k++) {
      b = buf[pos++]!;
      v += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) {
        this.next = pos;
        return v % 2 === 0 ? v / 2 : -(v + 1) / 2;
      }
      mul *= 128;
    }
    const c = new AvroCursor(buf, pos - 7, end);
    const big = c.long();
    this.next = c.pos;
    return typeof big === 'number' ? big : Number.NaN;
  }

  /** Checks the values of the entry just read as the decoder checks them. */
  private check(): void {
    const vals = this.vals;
    const version = vals[T_VERSION]!;
    if (version !== MANIFEST_FORMAT_VERSION) {
      throw new FormatError(
        `${this.path}: unsupported data manifest format version ${version} (expected ${MANIFEST_FORMAT_VERSION}); ` +
          (version < MANIFEST_FORMAT_VERSION ? 'the table was written by a too old Paimon, recreate it' : 'written by a newer Paimon'),
      );
    }
    const kind = vals[T_KIND]!;
    if (kind !== 0 && kind !== 1)
      throw new FormatError(`${this.path}: unknown manifest entry _KIND ${kind} (expected 0 = ADD or 1 = DELETE)`);
    const nulls = this.nulls;
    for (let k = 0; k < NUMBER_LONGS.length; k++) {
      const r = FILE_BASE + NUMBER_LONGS[k]!;
      if (nulls[r] === 0 && Number.isNaN(vals[r])) {
        throw new CorruptFileError(this.path, `field '_FILE.${FILE_NAMES[NUMBER_LONGS[k]!]}' exceeds 2^53 and cannot be a number`);
      }
    }
  }

  private missing(r: number): never {
    const name = r < FILE_BASE ? TOP_NAMES[r]! : `_FILE.${FILE_NAMES[r - FILE_BASE]!}`;
    throw new CorruptFileError(this.path, `required field '${name}' is missing or null`);
  }

  /** `stats`: the `F_KEY_STATS` or `F_VALUE_STATS` the null count is in. */
  private unsafeNullCount(stats: number, index: number): never {
    const name = FILE_NAMES[stats]!;
    throw new CorruptFileError(this.path, `'_FILE.${name}._NULL_COUNTS[${index}]' is not a safe long`);
  }
}

/** The compiled walk of one writer schema. */
interface WalkProgram {
  readonly program: Int32Array;
  readonly types: readonly AvroBinaryType[];
  readonly required: Uint8Array;
  /** 1 for registers present in the writer schema. */
  readonly present: Uint8Array;
}

/** Compiles the walk of a layout, or null when a field the walk needs is not of a type it reads. */
function compile(layout: EntryLayout): WalkProgram | null {
  const out: ProgramBuilder = { program: [], types: [] };
  const present = new Uint8Array(SLOTS);
  if (!emitEntry(out, layout, present) || !readsNeededFields(layout, present)) return null;
  return { program: Int32Array.from(out.program), types: out.types, required: requiredRegisters(), present };
}

/** A program being compiled: its ops and the types its `OP_GENERIC` ops skip. */
interface ProgramBuilder {
  readonly program: number[];
  readonly types: AvroBinaryType[];
}

/** 1 for the registers a null value is an error in. */
function requiredRegisters(): Uint8Array {
  const required = new Uint8Array(SLOTS);
  for (const r of [T_VERSION, T_KIND, T_PARTITION, T_BUCKET, T_TOTAL_BUCKETS, T_FILE]) required[r] = 1;
  for (const f of REQUIRED_FILE) required[FILE_BASE + f] = 1;
  return required;
}

/** Emits the ops of one manifest entry, marking the registers the schema has in `present`; false when it cannot. */
function emitEntry(out: ProgramBuilder, layout: EntryLayout, present: Uint8Array): boolean {
  const program = out.program;
  for (const step of layout.top) {
    if (step.slot === T_FILE) {
      if (step.type.kind !== 'record') return false;
      present[T_FILE] = 1;
      program.push(OP_BEGIN, T_FILE, 0, 0);
      for (const fs of layout.file) {
        const r = fs.slot < 0 ? -1 : FILE_BASE + fs.slot;
        if (r >= 0) present[r] = 1;
        const ok = fs.stats !== null ? emitStats(out, fs, r) : emitValue(out, fs.type, r);
        if (!ok) return false;
      }
      program.push(OP_END, T_FILE, 0, 0);
    } else {
      if (step.slot >= 0) present[step.slot] = 1;
      if (!emitValue(out, step.type, step.slot)) return false;
    }
  }
  return true;
}

/**
 * Emits the ops of a value of `t` into register `r` (-1: not kept); false when it cannot.
 * `nullCountsOf`: the stats field whose `_NULL_COUNTS` this value is (-1: none).
 */
function emitValue(out: ProgramBuilder, t: AvroBinaryType, r: number, nullCountsOf = -1): boolean {
  const program = out.program;
  switch (t.kind) {
    case 'null':
      return true;
    case 'boolean':
      program.push(OP_FIXED, r, 1, 0);
      return true;
    case 'float':
      program.push(OP_FIXED, r, 4, 0);
      return true;
    case 'double':
      program.push(OP_FIXED, r, 8, 0);
      return true;
    case 'fixed':
      program.push(OP_FIXED, r, t.size, 0);
      return true;
    case 'int':
    case 'enum':
      program.push(OP_VARINT, r, 1, 0);
      return true;
    case 'long':
      program.push(OP_VARINT, r, 0, 0);
      return true;
    case 'bytes':
    case 'string':
      program.push(OP_BYTES, r, 0, 0);
      return true;
    case 'union': {
      const nullBranch = t.branches.findIndex((b) => b.kind === 'null');
      if (t.branches.length === 2 && nullBranch >= 0) {
        const at = program.length;
        program.push(OP_NULLABLE, r, nullBranch, 0);
        if (!emitValue(out, t.branches[1 - nullBranch]!, r, nullCountsOf)) return false;
        program[at + 3] = (program.length - at) / 4 - 1;
        return true;
      }
      break;
    }
    case 'array':
      if (emitSimpleArray(out, t.items, r, nullCountsOf)) return true;
      break;
    case 'record':
      if (r >= 0) program.push(OP_BEGIN, r, 0, 0);
      for (const f of t.fields) if (!emitValue(out, f.type, -1, nullCountsOf)) return false;
      if (r >= 0) program.push(OP_END, r, 0, 0);
      return true;
    default:
      break;
  }
  // Anything else (maps, other unions, arrays of records) is skipped by the cursor; a register
  // gets its extent only.
  out.types.push(t);
  program.push(OP_GENERIC, r, out.types.length - 1, 0);
  return true;
}

/** Emits an `OP_ARRAY` for an array of `items` the walk reads itself; false for other items (skipped generically). */
function emitSimpleArray(out: ProgramBuilder, items: AvroBinaryType, r: number, nullCountsOf: number): boolean {
  const program = out.program;
  if (items.kind === 'int' || items.kind === 'long' || items.kind === 'enum') {
    program.push(OP_ARRAY, r, ITEM_VARINT, 0);
    return true;
  }
  if (items.kind === 'bytes' || items.kind === 'string') {
    program.push(OP_ARRAY, r, ITEM_BYTES, 0);
    return true;
  }
  if (items.kind === 'fixed' || items.kind === 'double' || items.kind === 'float' || items.kind === 'boolean') {
    program.push(
      OP_ARRAY,
      r,
      ITEM_FIXED,
      items.kind === 'fixed' ? items.size : items.kind === 'double' ? 8 : items.kind === 'float' ? 4 : 1,
    );
    return true;
  }
  if (
    nullCountsOf >= 0 &&
    items.kind === 'union' &&
    items.branches.length === 2 &&
    items.branches.some((b) => b.kind === 'null') &&
    items.branches.some((b) => b.kind === 'long' || b.kind === 'int')
  ) {
    // arg2: the null branch, and which stats the counts are of (for the error).
    program.push(OP_ARRAY, -1, ITEM_NULLABLE_LONG, items.branches.findIndex((b) => b.kind === 'null') | (nullCountsOf << 1));
    return true;
  }
  return false;
}

/** A stats record: its extent, with the null counts checked. */
function emitStats(out: ProgramBuilder, step: FieldStep, r: number): boolean {
  const t = step.type;
  if (t.kind !== 'record') return false;
  out.program.push(OP_BEGIN, r, 0, 0);
  for (const f of t.fields) {
    const ok = f.name === '_NULL_COUNTS' ? emitValue(out, f.type, -1, step.slot) : emitValue(out, f.type, -1);
    if (!ok) return false;
  }
  out.program.push(OP_END, r, 0, 0);
  return true;
}

/** Registers the walk reads, with the value kinds it reads them as: each must be in the schema. */
const NEEDED_KINDS: ReadonlyArray<readonly [number, readonly string[]]> = [
  [T_VERSION, ['int', 'long']],
  [T_KIND, ['int', 'long']],
  [T_PARTITION, ['bytes']],
  [T_BUCKET, ['int', 'long']],
  [T_TOTAL_BUCKETS, ['int', 'long']],
  [T_FILE, ['record']],
  [FILE_BASE + F_NAME, ['string']],
  [FILE_BASE + F_SIZE, ['int', 'long']],
  [FILE_BASE + F_ROWS, ['int', 'long']],
  [FILE_BASE + F_MIN_SEQ, ['int', 'long']],
  [FILE_BASE + F_MAX_SEQ, ['int', 'long']],
  [FILE_BASE + F_SCHEMA_ID, ['int', 'long']],
  [FILE_BASE + F_LEVEL, ['int', 'long']],
  [FILE_BASE + F_EXTRA_FILES, ['array']],
];
/** Optional `_FILE` fields the identity looks at: absent reads as null; present, they must be of these kinds. */
const OPTIONAL_KINDS: ReadonlyArray<readonly [number, readonly string[]]> = [
  [F_EMBEDDED_INDEX, ['bytes']],
  [F_EXTERNAL_PATH, ['string']],
  [F_STATS_COLS, ['array']],
  [F_WRITE_COLS, ['array']],
  [F_WRITE_COLS_SEQ, ['array']],
];

/** Whether every field the walk reads is in the schema (or optional and absent) with a type it can read. */
function readsNeededFields(layout: EntryLayout, present: Uint8Array): boolean {
  for (const [r, kinds] of NEEDED_KINDS) if (!kinds.includes(registerKind(layout, r) ?? '')) return false;
  for (const f of REQUIRED_FILE) if (present[FILE_BASE + f] === 0) return false;
  for (const [f, kinds] of OPTIONAL_KINDS) {
    if (present[FILE_BASE + f] === 1 && !kinds.includes(registerKind(layout, FILE_BASE + f) ?? '')) return false;
  }
  return true;
}

/** The Avro kind of register `r`'s field in the schema (of its non-null branch), undefined when absent. */
function registerKind(layout: EntryLayout, r: number): string | undefined {
  if (r === T_FILE) return 'record';
  const steps = r < FILE_BASE ? layout.top : layout.file;
  const slot = r < FILE_BASE ? r : r - FILE_BASE;
  let t = steps.find((s) => s.slot === slot)?.type;
  if (t?.kind === 'union' && t.branches.length === 2) t = t.branches.find((b) => b.kind !== 'null');
  return t?.kind;
}
