/**
 * SimpleStats kept as their raw Avro bytes (`_KEY_STATS`, `_VALUE_STATS` of a manifest entry) and
 * decoded only when read. Planning touches the stats of few entries (only with a stats filter),
 * while a plan keeps one entry per live file: three objects and two byte arrays per stats record
 * would be most of its memory.
 */
import { AvroBinaryError, AvroCursor, type AvroBinaryType } from './avro-binary.js';
import { EMPTY_ROW_BYTES, type SimpleStats } from './manifest-fields.js';

/** Where the fields of a stats record are in a writer schema. */
export class StatsLayout {
  private constructor(
    readonly type: AvroBinaryType & { kind: 'record' },
    readonly minIndex: number,
    readonly maxIndex: number,
    /** -1 when the writer schema has no `_NULL_COUNTS` (then null counts are null). */
    readonly nullsIndex: number,
  ) {
    this.emptyBytes = emptyStatsBytes(type, minIndex, maxIndex, nullsIndex);
  }

  /**
   * The encoding of empty stats (empty rows, no null counts), as Paimon writes it for the key
   * stats of append tables; null when this layout has fields besides min, max and null counts.
   */
  private readonly emptyBytes: Uint8Array | null;

  /**
   * Whether `buf[start, end)` holds empty stats in their canonical encoding, compared byte for
   * byte (decoding every entry's key stats to look was a good part of planning's cost); undefined
   * when this layout has other fields too and the caller has to decode to tell.
   */
  isEmpty(buf: Uint8Array, start: number, end: number): boolean | undefined {
    const e = this.emptyBytes;
    if (e === null) return undefined;
    if (end - start !== e.length) return false;
    for (let i = 0; i < e.length; i++) if (buf[start + i] !== e[i]) return false;
    return true;
  }

  /**
   * The layout of a stats record type, or null when it is not one this module can read lazily
   * (missing or mistyped `_MIN_VALUES`/`_MAX_VALUES`, null counts not an array of longs).
   */
  static of(type: AvroBinaryType): StatsLayout | null {
    if (type.kind !== 'record') return null;
    const names = type.fields.map((f) => f.name);
    const minIndex = names.indexOf('_MIN_VALUES');
    const maxIndex = names.indexOf('_MAX_VALUES');
    const nullsIndex = names.indexOf('_NULL_COUNTS');
    if (minIndex < 0 || maxIndex < 0) return null;
    if (type.fields[minIndex]!.type.kind !== 'bytes' || type.fields[maxIndex]!.type.kind !== 'bytes') return null;
    if (nullsIndex >= 0 && !isNullCountsType(type.fields[nullsIndex]!.type)) return null;
    return new StatsLayout(type, minIndex, maxIndex, nullsIndex);
  }

  /**
   * Walks the stats record at the cursor, checking what the eager reader checks (lengths in the
   * block, every null count null or a safe long). Returns the first null count that is not, or -1.
   */
  skipChecked(c: AvroCursor): number {
    let bad = -1;
    const fields = this.type.fields;
    for (let i = 0; i < fields.length; i++) {
      if (i === this.nullsIndex) bad = skipNullCounts(c, fields[i]!.type);
      else c.skip(fields[i]!.type);
    }
    return bad;
  }

  /** Decodes min, max and null counts of the record at `buf[start..]`. */
  decode(buf: Buffer, start: number): { minValues: Buffer; maxValues: Buffer; nullCounts: (number | null)[] | null } {
    const c = new AvroCursor(buf, start, buf.length);
    let minValues: Buffer | undefined;
    let maxValues: Buffer | undefined;
    let nullCounts: (number | null)[] | null = null;
    const fields = this.type.fields;
    for (let i = 0; i < fields.length; i++) {
      if (i === this.minIndex) minValues = c.bytesView();
      else if (i === this.maxIndex) maxValues = c.bytesView();
      else if (i === this.nullsIndex) nullCounts = c.scalar(fields[i]!.type) as (number | null)[] | null;
      else c.skip(fields[i]!.type);
    }
    return { minValues: minValues!, maxValues: maxValues!, nullCounts };
  }

  /** The bytes of `_MIN_VALUES` or `_MAX_VALUES` of the record at `buf[start..]`, as a view. */
  row(buf: Buffer, start: number, which: 'min' | 'max'): Buffer {
    const want = which === 'min' ? this.minIndex : this.maxIndex;
    const c = new AvroCursor(buf, start, buf.length);
    const fields = this.type.fields;
    for (let i = 0; i < want; i++) c.skip(fields[i]!.type);
    return c.bytesView();
  }
}

/** Avro bytes of empty stats in `type`: two empty BinaryRows and an empty null-counts array. */
function emptyStatsBytes(
  type: AvroBinaryType & { kind: 'record' },
  minIndex: number,
  maxIndex: number,
  nullsIndex: number,
): Uint8Array | null {
  if (nullsIndex < 0 || type.fields.length !== 3) return null;
  const out: number[] = [];
  for (let i = 0; i < 3; i++) {
    if (i === minIndex || i === maxIndex) {
      // zigzag varint of the length, then the row's zero bytes
      out.push(EMPTY_ROW_BYTES.length * 2, ...EMPTY_ROW_BYTES);
    } else {
      const t = type.fields[i]!.type;
      if (t.kind === 'union') {
        const branch = t.branches.findIndex((b) => b.kind === 'array');
        if (branch < 0 || branch > 63) return null;
        out.push(branch * 2);
      }
      out.push(0); // an array with no block
    }
  }
  return Uint8Array.from(out);
}

function isNullCountsType(t: AvroBinaryType): boolean {
  const arrayOfLongs = (a: AvroBinaryType): boolean =>
    a.kind === 'array' &&
    (a.items.kind === 'long' ||
      a.items.kind === 'int' ||
      (a.items.kind === 'union' && a.items.branches.every((b) => b.kind === 'null' || b.kind === 'long' || b.kind === 'int')));
  if (t.kind === 'union') return t.branches.every((b) => b.kind === 'null' || arrayOfLongs(b));
  return arrayOfLongs(t);
}

/** Skips a null-counts value; returns the index of the first count that is not a safe long, or -1. */
function skipNullCounts(c: AvroCursor, t: AvroBinaryType): number {
  if (t.kind === 'union') {
    const b = t.branches[c.branch(t.branches.length)]!;
    return b.kind === 'null' ? -1 : skipNullCounts(c, b);
  }
  if (t.kind !== 'array') throw new AvroBinaryError(`null counts of type ${t.kind}`);
  const items = t.items;
  let bad = -1;
  let index = 0;
  for (let n = c.blockCount(); n > 0; n = c.blockCount()) {
    for (let i = 0; i < n; i++, index++) {
      let item = items;
      if (item.kind === 'union') item = item.branches[c.branch(item.branches.length)]!;
      if (item.kind === 'null') continue;
      const v = item.kind === 'int' ? c.int() : c.long();
      if (typeof v !== 'number' && bad < 0) bad = index;
    }
  }
  return bad;
}

/**
 * A {@link SimpleStats} over the raw Avro bytes of a stats record; fields are decoded on each read
 * (null counts once). Holds a view of the bytes it was given: of the decoded manifest block, or of
 * a copy in a {@link ByteArena}.
 */
export class EncodedSimpleStats implements SimpleStats {
  #buf: Buffer;
  #start: number;
  #layout: StatsLayout;
  #nullCounts: readonly (number | null)[] | null | undefined;

  /** `buf` must hold one stats record of `layout` at `start`, already checked. */
  constructor(buf: Buffer, start: number, layout: StatsLayout, nullCounts?: readonly (number | null)[] | null) {
    this.#buf = buf;
    this.#start = start;
    this.#layout = layout;
    this.#nullCounts = nullCounts;
  }

  get minValues(): Uint8Array {
    return this.#layout.row(this.#buf, this.#start, 'min');
  }

  get maxValues(): Uint8Array {
    return this.#layout.row(this.#buf, this.#start, 'max');
  }

  get nullCounts(): readonly (number | null)[] | null {
    if (this.#nullCounts === undefined) this.#nullCounts = this.#layout.decode(this.#buf, this.#start).nullCounts;
    return this.#nullCounts;
  }

  /** The plain form, so JSON output and structured copies show the values rather than `{}`. */
  toJSON(): SimpleStats {
    return { minValues: this.minValues, maxValues: this.maxValues, nullCounts: this.nullCounts };
  }
}

/** {@link ByteArena} copies rows up to this many bytes byte by byte. */
const SMALL_COPY = 96;

/**
 * Append-only byte storage for the encoded stats and key rows of entries that outlive their
 * manifest block: one ArrayBuffer per chunk instead of one (plus a typed-array object) per row.
 * Chunks are freed when nothing views them any more.
 */
export class ByteArena {
  private chunk: Buffer | null = null;
  private pos = 0;

  /** @param chunkSize bytes per chunk (a row larger than this gets a chunk of its own). */
  constructor(private readonly chunkSize = 256 * 1024) {}

  /** Copies `src[start, end)` into the arena; returns the chunk and the offset of the copy. */
  copy(src: Uint8Array, start: number, end: number): { readonly buf: Buffer; readonly offset: number } {
    const n = end - start;
    if (this.chunk === null || this.pos + n > this.chunk.length) {
      this.chunk = Buffer.allocUnsafeSlow(Math.max(this.chunkSize, n));
      this.pos = 0;
    }
    const offset = this.pos;
    const chunk = this.chunk;
    // Rows are mostly tens of bytes: a loop beats making a subarray view to hand to set().
    if (n <= SMALL_COPY) for (let i = 0; i < n; i++) chunk[offset + i] = src[start + i]!;
    else chunk.set(src.subarray(start, end), offset);
    this.pos += n;
    return { buf: chunk, offset };
  }

  /** A view of a copy of `src[start, end)` in the arena. */
  view(src: Uint8Array, start: number, end: number): Buffer {
    const { buf, offset } = this.copy(src, start, end);
    return buf.subarray(offset, offset + end - start);
  }
}
