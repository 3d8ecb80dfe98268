/**
 * Normalized keys of a primary-key write buffer (Paimon's `NormalizedKeyComputer`, used by its
 * `BinaryInMemorySortBuffer`): each record's key (then `sequence.field` values) becomes a fixed
 * number of 32-bit words whose unsigned order is the key order of key-order.ts, so the buffer sorts
 * and groups records on typed arrays. Integers flip their sign bit; FLOAT and DOUBLE take
 * `floatToIntBits` / `doubleToLongBits` (one NaN) with the sign trick of Paimon's
 * `SortUtil.putDoubleNormalizedKey`, which gives `Double.compare`'s order; DECIMAL compares its
 * 128-bit two's complement; a nullable field starts with a null word (nulls first).
 *
 * Strings and binaries are not fully determined by their words: they contribute the 8 bytes that
 * follow the prefix every value of the buffer shares, and records whose words tie are ordered by
 * {@link NormalizedKeyLayout.compare}.
 */
import type * as arrow from 'apache-arrow';
import type { DataField, DataType } from '@tidemark/format';
import { valueReader } from '../../read/arrow-values.js';
import { compareKeyValues } from '../../key-order.js';

/** Bytes of a string or binary value that its words hold (after the shared prefix). */
const PREFIX_BYTES = 8;

/** One field of the layout: where its words go and how its values compare. */
interface FieldSlot {
  readonly type: DataType;
  /** Column index in the buffer's chunks. */
  readonly column: number;
  /** First word of the field in a record's words. */
  readonly offset: number;
  /** Its words (the null word included). */
  readonly words: number;
  readonly nullable: boolean;
  /** Values compare reversed (a descending `sequence.field`); nulls stay first. */
  readonly descending: boolean;
  /** The words decide order and equality of the field's values. */
  readonly determined: boolean;
  /** Strings and binaries: bytes every value of the buffer starts with (left out of the words). */
  sharedPrefix: number;
}

/** The words of every record of a buffer, and how to compare what they leave open. */
export class NormalizedKeyLayout {
  /** Words per record. */
  readonly stride: number;
  /** Words of the key fields (the first `keyWords` of a record's words). */
  readonly keyWords: number;
  /** Every key field is determined by its words: equal key words = equal keys. */
  readonly keyDetermined: boolean;
  /** Every field is determined by its words: records order by words alone. */
  readonly allDetermined: boolean;
  /**
   * Words up to and including the first field its words do not determine: records whose words
   * tie there are ordered by {@link compare} (`stride` when every field is determined).
   */
  readonly determinedWords: number;
  private readonly slots: FieldSlot[];
  private readonly keyFieldCount: number;

  /**
   * @param fields the buffer's columns
   * @param keyFields the trimmed primary key (columns of `fields`)
   * @param sequenceFields `sequence.field` columns, ordering records of one key
   * @param sequenceDescending `sequence.field.sort-order` = descending
   */
  constructor(
    fields: readonly DataField[],
    keyFields: readonly DataField[],
    sequenceFields: readonly DataField[],
    sequenceDescending: boolean,
  ) {
    const slots: FieldSlot[] = [];
    let offset = 0;
    const place = (f: DataField, descending: boolean): void => {
      const column = fields.findIndex((x) => x.id === f.id);
      if (column < 0) throw new TypeError(`column '${f.name}' is needed to sort the write buffer but not held`);
      const nullable = f.type.nullable;
      const value = valueWords(f.type);
      const words = (nullable ? 1 : 0) + value.words;
      slots.push({ type: f.type, column, offset, words, nullable, descending, determined: value.determined, sharedPrefix: 0 });
      offset += words;
    };
    for (const f of keyFields) place(f, false);
    const keyWords = offset;
    for (const f of sequenceFields) place(f, sequenceDescending);
    this.slots = slots;
    this.stride = offset;
    this.keyWords = keyWords;
    this.keyFieldCount = keyFields.length;
    this.keyDetermined = slots.slice(0, keyFields.length).every((s) => s.determined);
    const open = slots.find((s) => !s.determined);
    this.allDetermined = open === undefined;
    this.determinedWords = open === undefined ? offset : open.offset + open.words;
  }

  /**
   * Fills `out` (stride words per record) with the words of every record: chunk after chunk,
   * `chunks[column][chunk]` holding `rows[chunk]` rows.
   */
  encode(chunks: readonly (readonly arrow.Data[])[], rows: readonly number[], out: Uint32Array): void {
    for (const slot of this.slots) {
      if (!slot.determined) slot.sharedPrefix = sharedPrefixOf(chunks[slot.column]!, rows);
      let base = 0;
      for (let c = 0; c < rows.length; c++) {
        encodeField(slot, chunks[slot.column]![c]!, rows[c]!, out, base, this.stride);
        base += rows[c]!;
      }
    }
  }

  /**
   * Compares records `a` and `b` field by field where their words leave it open: a determined
   * field by its words, another by its full value (key fields only with `keyOnly`). Negative, 0
   * or positive. `chunkOf` and `rowOf` locate a record in the chunks.
   */
  compare(
    words: Uint32Array,
    chunks: readonly (readonly arrow.Data[])[],
    chunkOf: Uint32Array,
    rowOf: Uint32Array,
    a: number,
    b: number,
    keyOnly: boolean,
  ): number {
    const count = keyOnly ? this.keyFieldCount : this.slots.length;
    const stride = this.stride;
    for (let i = 0; i < count; i++) {
      const slot = this.slots[i]!;
      if (slot.determined) {
        for (let w = slot.offset; w < slot.offset + slot.words; w++) {
          const x = words[a * stride + w]!;
          const y = words[b * stride + w]!;
          if (x !== y) return x < y ? -1 : 1;
        }
        continue;
      }
      const column = chunks[slot.column]!;
      const c = compareField(slot, column[chunkOf[a]!]!, rowOf[a]!, column[chunkOf[b]!]!, rowOf[b]!);
      if (c !== 0) return c;
    }
    return 0;
  }
}

/** Value words of a type, and whether they decide its order and equality. */
function valueWords(type: DataType): { words: number; determined: boolean } {
  switch (type.root) {
    case 'BOOLEAN':
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
    case 'DATE':
    case 'TIME':
    case 'FLOAT':
      return { words: 1, determined: true };
    case 'BIGINT':
    case 'DOUBLE':
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ':
      return { words: 2, determined: true };
    case 'DECIMAL':
      return { words: 4, determined: true };
    case 'CHAR':
    case 'VARCHAR':
    case 'BINARY':
    case 'VARBINARY':
      return { words: PREFIX_BYTES / 4, determined: false };
    default:
      // Nested types are not key types in Paimon; order them by value all the same.
      return { words: 0, determined: false };
  }
}

function isValid(data: arrow.Data, row: number): boolean {
  if (data.nullCount === 0) return true;
  const bitmap = data.nullBitmap;
  if (!bitmap || bitmap.length === 0) return true;
  const pos = data.offset + row;
  return ((bitmap[pos >> 3]! >> (pos & 7)) & 1) === 1;
}

/** Writes the words of one field for `rows` rows of `data`, records starting at `base`. */
function encodeField(slot: FieldSlot, data: arrow.Data, rows: number, out: Uint32Array, base: number, stride: number): void {
  const valueAt = slot.offset + (slot.nullable ? 1 : 0);
  const valueCount = slot.words - (slot.nullable ? 1 : 0);
  encodeValues(slot, data, rows, out, base * stride + valueAt, stride);
  if (!slot.nullable && !slot.descending) return;
  for (let r = 0; r < rows; r++) {
    const at = (base + r) * stride;
    if (!isValid(data, r)) {
      if (slot.nullable) out[at + slot.offset] = 0;
      for (let w = 0; w < valueCount; w++) out[at + valueAt + w] = 0;
      continue;
    }
    if (slot.nullable) out[at + slot.offset] = 1;
    if (slot.descending) for (let w = 0; w < valueCount; w++) out[at + valueAt + w] = ~out[at + valueAt + w]! >>> 0;
  }
}

/** Writes the value words of `rows` rows (whatever a null row holds is overwritten by the caller). */
function encodeValues(slot: FieldSlot, data: arrow.Data, rows: number, out: Uint32Array, first: number, stride: number): void {
  const values = data.values as ArrayLike<number> & { buffer: ArrayBufferLike; byteOffset: number };
  switch (slot.type.root) {
    case 'BOOLEAN': {
      const bits = data.values as Uint8Array;
      for (let r = 0; r < rows; r++) {
        const pos = data.offset + r;
        out[first + r * stride] = (bits[pos >> 3]! >> (pos & 7)) & 1;
      }
      return;
    }
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
    case 'DATE':
    case 'TIME':
      for (let r = 0; r < rows; r++) out[first + r * stride] = (values[r]! ^ 0x80000000) >>> 0;
      return;
    case 'FLOAT': {
      const bits = new Uint32Array(values.buffer, values.byteOffset, rows);
      for (let r = 0; r < rows; r++) {
        let b = bits[r]!;
        // Float.floatToIntBits: every NaN is 0x7fc00000.
        if ((b & 0x7f800000) === 0x7f800000 && (b & 0x7fffff) !== 0) b = 0x7fc00000;
        out[first + r * stride] = (b & 0x80000000 ? ~b : b ^ 0x80000000) >>> 0;
      }
      return;
    }
    case 'DOUBLE': {
      const words = new Uint32Array(values.buffer, values.byteOffset, rows * 2);
      for (let r = 0; r < rows; r++) {
        let lo = words[2 * r]!;
        let hi = words[2 * r + 1]!;
        // Double.doubleToLongBits: every NaN is 0x7ff8000000000000.
        if ((hi & 0x7ff00000) === 0x7ff00000 && ((hi & 0xfffff) | lo) !== 0) {
          hi = 0x7ff80000;
          lo = 0;
        }
        const at = first + r * stride;
        if (hi & 0x80000000) {
          out[at] = ~hi >>> 0;
          out[at + 1] = ~lo >>> 0;
        } else {
          out[at] = (hi ^ 0x80000000) >>> 0;
          out[at + 1] = lo;
        }
      }
      return;
    }
    case 'BIGINT':
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ': {
      const words = new Uint32Array(values.buffer, values.byteOffset, rows * 2);
      for (let r = 0; r < rows; r++) {
        const at = first + r * stride;
        out[at] = (words[2 * r + 1]! ^ 0x80000000) >>> 0;
        out[at + 1] = words[2 * r]!;
      }
      return;
    }
    case 'DECIMAL': {
      // Decimal128: four little-endian 32-bit words per value, two's complement.
      const words = new Uint32Array(values.buffer, values.byteOffset, rows * 4);
      for (let r = 0; r < rows; r++) {
        const at = first + r * stride;
        out[at] = (words[4 * r + 3]! ^ 0x80000000) >>> 0;
        out[at + 1] = words[4 * r + 2]!;
        out[at + 2] = words[4 * r + 1]!;
        out[at + 3] = words[4 * r]!;
      }
      return;
    }
    case 'CHAR':
    case 'VARCHAR':
    case 'BINARY':
    case 'VARBINARY': {
      const offsets = data.valueOffsets as Int32Array;
      const bytes = data.values as Uint8Array;
      for (let r = 0; r < rows; r++) {
        const from = offsets[r]! + slot.sharedPrefix;
        const end = offsets[r + 1]!;
        const at = first + r * stride;
        for (let w = 0; w < PREFIX_BYTES / 4; w++) {
          let word = 0;
          for (let k = 0; k < 4; k++) {
            const i = from + w * 4 + k;
            word = (word << 8) | (i < end ? bytes[i]! : 0);
          }
          out[at + w] = word >>> 0;
        }
      }
      return;
    }
    default:
      return;
  }
}

/** Bytes that every non-null value of the string/binary chunks starts with. */
function sharedPrefixOf(chunks: readonly arrow.Data[], rows: readonly number[]): number {
  let first: Uint8Array | null = null;
  let firstAt = 0;
  let shared = Infinity;
  for (let c = 0; c < chunks.length && shared > 0; c++) {
    const data = chunks[c]!;
    const offsets = data.valueOffsets as Int32Array | undefined;
    if (!offsets) return 0;
    const bytes = data.values as Uint8Array;
    for (let r = 0; r < rows[c]! && shared > 0; r++) {
      if (!isValid(data, r)) continue;
      const from = offsets[r]!;
      const len = offsets[r + 1]! - from;
      if (first === null) {
        first = bytes;
        firstAt = from;
        shared = len;
        continue;
      }
      let k = 0;
      const max = Math.min(shared, len);
      while (k < max && bytes[from + k] === first[firstAt + k]) k++;
      shared = k;
    }
  }
  return shared === Infinity ? 0 : shared;
}

/** Full comparison of one field's values (nulls first; descending reverses non-null values). */
function compareField(slot: FieldSlot, a: arrow.Data, rowA: number, b: arrow.Data, rowB: number): number {
  const validA = isValid(a, rowA);
  const validB = isValid(b, rowB);
  if (!validA || !validB) return validA === validB ? 0 : validA ? 1 : -1;
  let c: number;
  if (a.valueOffsets && slot.words > 0) c = compareBytes(a, rowA, b, rowB);
  else c = compareKeyValues(valueReader(a, slot.type)(rowA)!, valueReader(b, slot.type)(rowB)!);
  return slot.descending ? -c : c;
}

/** Unsigned lexicographic comparison of two string/binary values (UTF-8 bytes: code point order). */
function compareBytes(a: arrow.Data, rowA: number, b: arrow.Data, rowB: number): number {
  const oa = a.valueOffsets as Int32Array;
  const ob = b.valueOffsets as Int32Array;
  const va = a.values as Uint8Array;
  const vb = b.values as Uint8Array;
  const fromA = oa[rowA]!;
  const fromB = ob[rowB]!;
  const lenA = oa[rowA + 1]! - fromA;
  const lenB = ob[rowB + 1]! - fromB;
  const n = Math.min(lenA, lenB);
  for (let i = 0; i < n; i++) {
    const d = va[fromA + i]! - vb[fromB + i]!;
    if (d !== 0) return d;
  }
  return lenA - lenB;
}
