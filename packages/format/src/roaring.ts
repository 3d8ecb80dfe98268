/**
 * Read-only RoaringBitmap in the portable serialization shared by the Java, C and Go
 * implementations (https://github.com/RoaringBitmap/RoaringFormatSpec), plus the 64-bit
 * "portable" layout used by Iceberg-compatible deletion vectors.
 *
 * Only what deletion vectors need: parse, membership test, cardinality, iteration, and a
 * serializer that writes the bytes Java's RoaringBitmap writes after `runOptimize()`.
 */
import { FormatError } from './errors.js';

const SERIAL_COOKIE_NO_RUNCONTAINER = 12346;
const SERIAL_COOKIE = 12347;
const NO_OFFSET_THRESHOLD = 4;
const ARRAY_MAX_CARDINALITY = 4096;
const BITMAP_BYTES = 8192;

type Container =
  | { readonly kind: 'array'; readonly values: Uint16Array }
  | { readonly kind: 'bitmap'; readonly words: Uint32Array }
  | { readonly kind: 'run'; readonly runs: Uint16Array }; // pairs (start, length - 1)

/** Thrown for bytes that are not a valid portable RoaringBitmap. */
export class RoaringFormatError extends FormatError {}

/** Binary search in a sorted uint16 array; index or -(insertion point) - 1. */
function search16(arr: Uint16Array, value: number, step = 1): number {
  let lo = 0;
  let hi = arr.length / step - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = arr[mid * step]!;
    if (v < value) lo = mid + 1;
    else if (v > value) hi = mid - 1;
    else return mid;
  }
  return -(lo + 1);
}

/** A 32-bit RoaringBitmap of unsigned integers. */
export class RoaringBitmap32 {
  private constructor(
    private readonly keys: Uint16Array,
    private readonly containers: readonly Container[],
    /** Number of values in the set. */
    readonly cardinality: number,
  ) {}

  /** Empty bitmap. */
  static empty(): RoaringBitmap32 {
    return new RoaringBitmap32(new Uint16Array(0), [], 0);
  }

  /**
   * Parses a portable serialization starting at `offset`. Returns the bitmap and the number of
   * bytes it occupied (so callers can check framing).
   *
   * @throws RoaringFormatError for an unknown cookie, truncated input or inconsistent containers.
   */
  static deserialize(bytes: Uint8Array, offset = 0): { bitmap: RoaringBitmap32; byteLength: number } {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let pos = offset;
    const need = (n: number, what: string): void => {
      if (pos + n > bytes.length) {
        throw new RoaringFormatError(
          `roaring bitmap truncated while reading ${what} (need ${n} bytes at ${pos}, have ${bytes.length - pos})`,
        );
      }
    };
    need(4, 'cookie');
    const cookie = view.getUint32(pos, true);
    pos += 4;
    let size: number;
    let runFlags: Uint8Array | null = null;
    let hasOffsets: boolean;
    if (cookie === SERIAL_COOKIE_NO_RUNCONTAINER) {
      need(4, 'container count');
      size = view.getUint32(pos, true);
      pos += 4;
      hasOffsets = true;
    } else if ((cookie & 0xffff) === SERIAL_COOKIE) {
      size = (cookie >>> 16) + 1;
      const flagBytes = Math.ceil(size / 8);
      need(flagBytes, 'run-container flags');
      runFlags = bytes.subarray(pos, pos + flagBytes);
      pos += flagBytes;
      hasOffsets = size >= NO_OFFSET_THRESHOLD;
    } else {
      throw new RoaringFormatError(`unknown roaring bitmap cookie ${cookie}`);
    }
    if (size > 65536) throw new RoaringFormatError(`roaring bitmap declares ${size} containers (max 65536)`);
    need(size * 4, 'container headers');
    const keys = new Uint16Array(size);
    const cards = new Uint32Array(size);
    for (let i = 0; i < size; i++) {
      keys[i] = view.getUint16(pos, true);
      cards[i] = view.getUint16(pos + 2, true) + 1;
      pos += 4;
      if (i > 0 && keys[i]! <= keys[i - 1]!) throw new RoaringFormatError('roaring bitmap container keys are not increasing');
    }
    if (hasOffsets) {
      need(size * 4, 'container offsets');
      pos += size * 4; // containers follow in order; offsets are redundant for a sequential parse
    }
    const containers: Container[] = [];
    let cardinality = 0;
    for (let i = 0; i < size; i++) {
      const card = cards[i]!;
      const isRun = runFlags !== null && ((runFlags[i >>> 3]! >>> (i & 7)) & 1) === 1;
      if (isRun) {
        need(2, 'run count');
        const nRuns = view.getUint16(pos, true);
        pos += 2;
        need(nRuns * 4, 'runs');
        const runs = new Uint16Array(nRuns * 2);
        let runCard = 0;
        for (let r = 0; r < nRuns * 2; r++) runs[r] = view.getUint16(pos + r * 2, true);
        for (let r = 0; r < nRuns; r++) runCard += runs[r * 2 + 1]! + 1;
        pos += nRuns * 4;
        if (runCard !== card) throw new RoaringFormatError(`run container ${i} holds ${runCard} values, header says ${card}`);
        containers.push({ kind: 'run', runs });
      } else if (card <= ARRAY_MAX_CARDINALITY) {
        need(card * 2, 'array container');
        const values = new Uint16Array(card);
        for (let v = 0; v < card; v++) values[v] = view.getUint16(pos + v * 2, true);
        pos += card * 2;
        containers.push({ kind: 'array', values });
      } else {
        need(BITMAP_BYTES, 'bitmap container');
        const words = new Uint32Array(BITMAP_BYTES / 4);
        let bits = 0;
        for (let w = 0; w < words.length; w++) {
          const word = view.getUint32(pos + w * 4, true);
          words[w] = word;
          bits += popcount32(word);
        }
        pos += BITMAP_BYTES;
        if (bits !== card) throw new RoaringFormatError(`bitmap container ${i} holds ${bits} values, header says ${card}`);
        containers.push({ kind: 'bitmap', words });
      }
      cardinality += card;
    }
    return { bitmap: new RoaringBitmap32(keys, containers, cardinality), byteLength: pos - offset };
  }

  /** Builds a bitmap from unsigned 32-bit values (any order, duplicates ignored). */
  static from(values: Iterable<number>): RoaringBitmap32 {
    const sorted = [...new Set(values)].sort((a, b) => a - b);
    const keys: number[] = [];
    const containers: Container[] = [];
    let i = 0;
    while (i < sorted.length) {
      const v0 = sorted[i]!;
      if (!Number.isInteger(v0) || v0 < 0 || v0 > 0xffffffff) throw new RangeError(`${v0} is not an unsigned 32-bit integer`);
      const key = v0 >>> 16;
      let j = i;
      while (j < sorted.length && sorted[j]! >>> 16 === key) j++;
      const lows = sorted.slice(i, j).map((v) => v & 0xffff);
      if (lows.length <= ARRAY_MAX_CARDINALITY) {
        containers.push({ kind: 'array', values: Uint16Array.from(lows) });
      } else {
        const words = new Uint32Array(BITMAP_BYTES / 4);
        for (const low of lows) words[low >>> 5]! |= 1 << (low & 31);
        containers.push({ kind: 'bitmap', words });
      }
      keys.push(key);
      i = j;
    }
    return new RoaringBitmap32(Uint16Array.from(keys), containers, sorted.length);
  }

  /** Whether `value` (an unsigned 32-bit integer) is in the set. */
  contains(value: number): boolean {
    if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) return false;
    const ki = search16(this.keys, value >>> 16);
    if (ki < 0) return false;
    const c = this.containers[ki]!;
    const low = value & 0xffff;
    switch (c.kind) {
      case 'array':
        return search16(c.values, low) >= 0;
      case 'bitmap':
        return ((c.words[low >>> 5]! >>> (low & 31)) & 1) === 1;
      case 'run': {
        const idx = search16(c.runs, low, 2);
        if (idx >= 0) return true;
        const prev = -idx - 2; // run starting before `low`
        return prev >= 0 && low <= c.runs[prev * 2]! + c.runs[prev * 2 + 1]!;
      }
    }
  }

  /** The values in increasing order. */
  *values(): IterableIterator<number> {
    for (let k = 0; k < this.keys.length; k++) {
      const high = this.keys[k]! * 65536;
      const c = this.containers[k]!;
      if (c.kind === 'array') {
        for (const v of c.values) yield high + v;
      } else if (c.kind === 'bitmap') {
        for (let w = 0; w < c.words.length; w++) {
          let word = c.words[w]!;
          while (word !== 0) {
            const t = word & -word;
            yield high + w * 32 + (31 - Math.clz32(t));
            word ^= t;
          }
        }
      } else {
        for (let r = 0; r < c.runs.length; r += 2) {
          const start = c.runs[r]!;
          const end = start + c.runs[r + 1]!;
          for (let v = start; v <= end; v++) yield high + v;
        }
      }
    }
  }

  /**
   * Portable serialization exactly as Java's `RoaringBitmap.serialize` writes it after
   * `runOptimize()` (which Paimon calls before every serialization): each container becomes a run
   * container when that is strictly smaller than its array (up to 4096 values) or bitmap form; with
   * any run container the run-enabled cookie (12347) and run flags are used, and the offset header
   * only from 4 containers on; without, cookie 12346 with the offset header.
   */
  serialize(): Uint8Array {
    const lows: Uint16Array[] = [];
    for (let k = 0; k < this.keys.length; k++) lows.push(containerValues(this.containers[k]!));
    return serializePortable(this.keys, lows);
  }
}

/** The low 16-bit values of a container, ascending. */
function containerValues(c: Container): Uint16Array {
  if (c.kind === 'array') return c.values;
  const out: number[] = [];
  if (c.kind === 'bitmap') {
    for (let w = 0; w < c.words.length; w++) {
      let word = c.words[w]!;
      while (word !== 0) {
        const t = word & -word;
        out.push(w * 32 + (31 - Math.clz32(t)));
        word ^= t;
      }
    }
  } else {
    for (let r = 0; r < c.runs.length; r += 2) for (let v = c.runs[r]!; v <= c.runs[r]! + c.runs[r + 1]!; v++) out.push(v);
  }
  return Uint16Array.from(out);
}

/** Number of runs of consecutive values in a sorted list. */
function countRuns(values: Uint16Array): number {
  let runs = 0;
  for (let i = 0; i < values.length; i++) if (i === 0 || values[i]! !== values[i - 1]! + 1) runs++;
  return runs;
}

type Encoded = { readonly kind: 'array' | 'bitmap' | 'run'; readonly size: number; readonly values: Uint16Array; readonly runs: number };

/** The form Java's `runOptimize()` leaves a container built by additions in. */
function encodedForm(values: Uint16Array): Encoded {
  const runs = countRuns(values);
  const runSize = 2 + 4 * runs;
  const plain =
    values.length <= ARRAY_MAX_CARDINALITY
      ? { kind: 'array' as const, size: 2 * values.length }
      : { kind: 'bitmap' as const, size: BITMAP_BYTES };
  return plain.size > runSize ? { kind: 'run', size: runSize, values, runs } : { ...plain, values, runs };
}

/** Writes containers (keys ascending, each with its ascending low values) in Java's portable layout. */
function serializePortable(keys: ArrayLike<number>, lows: readonly Uint16Array[]): Uint8Array {
  const n = keys.length;
  const forms = lows.map(encodedForm);
  const hasRun = forms.some((f) => f.kind === 'run');
  const flagBytes = hasRun ? Math.ceil(n / 8) : 0;
  const withOffsets = !hasRun || n >= NO_OFFSET_THRESHOLD;
  const headerSize = hasRun ? 4 + flagBytes + 4 * n + (withOffsets ? 4 * n : 0) : 8 + 8 * n;
  const total = headerSize + forms.reduce((s, f) => s + f.size, 0);
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  let pos = 0;
  if (hasRun) {
    view.setUint32(0, (SERIAL_COOKIE | ((n - 1) << 16)) >>> 0, true);
    pos = 4;
    forms.forEach((f, i) => {
      if (f.kind === 'run') out[pos + (i >>> 3)]! |= 1 << (i & 7);
    });
    pos += flagBytes;
  } else {
    view.setUint32(0, SERIAL_COOKIE_NO_RUNCONTAINER, true);
    view.setUint32(4, n, true);
    pos = 8;
  }
  for (let i = 0; i < n; i++) {
    view.setUint16(pos, keys[i]!, true);
    view.setUint16(pos + 2, forms[i]!.values.length - 1, true);
    pos += 4;
  }
  let body = headerSize;
  if (withOffsets) {
    for (let i = 0; i < n; i++) {
      view.setUint32(pos, body, true);
      pos += 4;
      body += forms[i]!.size;
    }
  }
  for (const f of forms) {
    const v = f.values;
    if (f.kind === 'array') {
      for (const x of v) {
        view.setUint16(pos, x, true);
        pos += 2;
      }
    } else if (f.kind === 'bitmap') {
      const words = new Uint32Array(BITMAP_BYTES / 4);
      for (const x of v) words[x >>> 5]! |= 1 << (x & 31);
      for (const w of words) {
        view.setUint32(pos, w, true);
        pos += 4;
      }
    } else {
      view.setUint16(pos, f.runs, true);
      pos += 2;
      for (let i = 0; i < v.length;) {
        let j = i;
        while (j + 1 < v.length && v[j + 1] === v[j]! + 1) j++;
        view.setUint16(pos, v[i]!, true);
        view.setUint16(pos + 2, j - i, true);
        pos += 4;
        i = j + 1;
      }
    }
  }
  return out;
}

/**
 * A growable set of unsigned 32-bit integers (deleted row positions), kept as one 8 KiB bitmap per
 * 65536-value block so that additions and lookups are O(1); {@link serialize} writes the same
 * bytes Java's RoaringBitmap writes for the same set.
 */
export class MutableRoaringBitmap32 {
  private readonly blocks = new Map<number, Uint32Array>();
  private count = 0;

  /** Number of values in the set. */
  get cardinality(): number {
    return this.count;
  }

  /** Adds `value`; false when it was already present. */
  add(value: number): boolean {
    if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) throw new RangeError(`${value} is not an unsigned 32-bit integer`);
    const high = Math.floor(value / 65536);
    const low = value & 0xffff;
    let words = this.blocks.get(high);
    if (words === undefined) {
      words = new Uint32Array(BITMAP_BYTES / 4);
      this.blocks.set(high, words);
    }
    const bit = 1 << (low & 31);
    if ((words[low >>> 5]! & bit) !== 0) return false;
    words[low >>> 5]! |= bit;
    this.count++;
    return true;
  }

  /** Whether `value` is in the set. */
  contains(value: number): boolean {
    if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) return false;
    const words = this.blocks.get(Math.floor(value / 65536));
    const low = value & 0xffff;
    return words !== undefined && ((words[low >>> 5]! >>> (low & 31)) & 1) === 1;
  }

  /** The values in increasing order. */
  *values(): IterableIterator<number> {
    for (const high of [...this.blocks.keys()].sort((a, b) => a - b)) {
      for (const low of containerValues({ kind: 'bitmap', words: this.blocks.get(high)! })) yield high * 65536 + low;
    }
  }

  /** Java-compatible portable serialization (see {@link RoaringBitmap32.serialize}). */
  serialize(): Uint8Array {
    const keys = [...this.blocks.keys()].sort((a, b) => a - b);
    return serializePortable(
      keys,
      keys.map((k) => containerValues({ kind: 'bitmap', words: this.blocks.get(k)! })),
    );
  }
}

function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

/**
 * A 64-bit bitmap in the "portable" layout (as in Iceberg's RoaringPositionBitmap and CRoaring's
 * `roaring64` portable format): uint64 LE count of 32-bit bitmaps, then per bitmap a uint32 LE
 * high key and a portable 32-bit bitmap of the low halves, keys increasing.
 */
export class RoaringBitmap64 {
  private constructor(
    private readonly highs: readonly number[],
    private readonly bitmaps: readonly RoaringBitmap32[],
    readonly cardinality: number,
  ) {}

  /** @throws RoaringFormatError for truncated or inconsistent input. */
  static deserialize(bytes: Uint8Array, offset = 0): { bitmap: RoaringBitmap64; byteLength: number } {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (offset + 8 > bytes.length) throw new RoaringFormatError('64-bit roaring bitmap truncated in its bitmap count');
    const count = view.getBigUint64(offset, true);
    if (count > 0xffffffffn) throw new RoaringFormatError(`64-bit roaring bitmap declares ${count} bitmaps`);
    let pos = offset + 8;
    const highs: number[] = [];
    const bitmaps: RoaringBitmap32[] = [];
    let cardinality = 0;
    for (let i = 0; i < Number(count); i++) {
      if (pos + 4 > bytes.length) throw new RoaringFormatError('64-bit roaring bitmap truncated in a high key');
      const high = view.getUint32(pos, true);
      if (highs.length > 0 && high <= highs[highs.length - 1]!) {
        throw new RoaringFormatError('64-bit roaring bitmap high keys are not increasing');
      }
      pos += 4;
      const { bitmap, byteLength } = RoaringBitmap32.deserialize(bytes, pos);
      pos += byteLength;
      highs.push(high);
      bitmaps.push(bitmap);
      cardinality += bitmap.cardinality;
    }
    return { bitmap: new RoaringBitmap64(highs, bitmaps, cardinality), byteLength: pos - offset };
  }

  /** Whether the non-negative integer `value` is in the set. */
  contains(value: number | bigint): boolean {
    const v = BigInt(value);
    if (v < 0n || v > 0xffffffffffffffffn) return false;
    const high = Number(v >> 32n);
    let lo = 0;
    let hi = this.highs.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const h = this.highs[mid]!;
      if (h < high) lo = mid + 1;
      else if (h > high) hi = mid - 1;
      else return this.bitmaps[mid]!.contains(Number(v & 0xffffffffn));
    }
    return false;
  }

  /** Values in increasing order (numbers; row positions stay below 2^53). */
  *values(): IterableIterator<number> {
    for (let i = 0; i < this.highs.length; i++) {
      const base = this.highs[i]! * 2 ** 32;
      for (const low of this.bitmaps[i]!.values()) yield base + low;
    }
  }
}
