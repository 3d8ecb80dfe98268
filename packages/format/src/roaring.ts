/**
 * Read-only RoaringBitmap in the portable serialization shared by the Java, C and Go
 * implementations (https://github.com/RoaringBitmap/RoaringFormatSpec), plus the 64-bit
 * "portable" layout used by Iceberg-compatible deletion vectors.
 *
 * Only what deletion vectors need: parse, membership test, cardinality, iteration. A simple
 * serializer (array and bitmap containers, no run containers) exists for tests and future DV
 * writing.
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
   * Portable serialization without run containers (cookie 12346, always with the offset header),
   * which every Roaring implementation reads.
   */
  serialize(): Uint8Array {
    const n = this.keys.length;
    const bodySizes = this.containers.map((c) => (c.kind === 'array' ? c.values.length * 2 : c.kind === 'bitmap' ? BITMAP_BYTES : -1));
    if (bodySizes.includes(-1)) {
      return RoaringBitmap32.from(this.values()).serialize();
    }
    const headerSize = 8 + n * 8;
    const total = headerSize + bodySizes.reduce((a, b) => a + b, 0);
    const out = new Uint8Array(total);
    const view = new DataView(out.buffer);
    view.setUint32(0, SERIAL_COOKIE_NO_RUNCONTAINER, true);
    view.setUint32(4, n, true);
    let bodyPos = headerSize;
    for (let i = 0; i < n; i++) {
      const c = this.containers[i]!;
      const card = c.kind === 'array' ? c.values.length : c.kind === 'bitmap' ? c.words.reduce((s, w) => s + popcount32(w), 0) : 0;
      view.setUint16(8 + i * 4, this.keys[i]!, true);
      view.setUint16(8 + i * 4 + 2, card - 1, true);
      view.setUint32(8 + n * 4 + i * 4, bodyPos, true);
      if (c.kind === 'array') {
        for (const v of c.values) {
          view.setUint16(bodyPos, v, true);
          bodyPos += 2;
        }
      } else if (c.kind === 'bitmap') {
        for (const w of c.words) {
          view.setUint32(bodyPos, w, true);
          bodyPos += 4;
        }
      }
    }
    return out;
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
