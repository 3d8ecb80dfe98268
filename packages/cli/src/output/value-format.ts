/**
 * Turns Arrow values into the JSON values that `tidemark read --format jsonl` prints:
 *
 * | Paimon type            | printed as                                                                       |
 * |------------------------|----------------------------------------------------------------------------------|
 * | BOOLEAN                | `true` / `false`                                                                 |
 * | TINYINT/SMALLINT/INT   | number                                                                           |
 * | BIGINT                 | number when within ±(2^53-1), else a string of digits                            |
 * | FLOAT / DOUBLE         | number (FLOAT in its shortest float32 form: `0.1`, not `0.10000000149011612`); NaN and ±Infinity as the strings `"NaN"`, `"Infinity"`, `"-Infinity"` |
 * | DECIMAL(p,s)           | string with exactly `s` fraction digits, computed from the unscaled integer (never via float) |
 * | CHAR/VARCHAR/STRING    | string                                                                           |
 * | BINARY/VARBINARY/BYTES | base64 string                                                                    |
 * | DATE                   | `YYYY-MM-DD` (years past 9999 as `+10000`, negative years as `-0001`, as Java)  |
 * | TIME(p)                | `HH:MM:SS` plus `.` and p digits when p > 0                                      |
 * | TIMESTAMP(p)           | `YYYY-MM-DDTHH:MM:SS` plus `.` and exactly p digits when p > 0                   |
 * | TIMESTAMP_LTZ(p)       | the same in UTC with a trailing `Z`                                              |
 * | ARRAY / MULTISET-less  | JSON array                                                                       |
 * | ROW                    | JSON object with the fields in declaration order                                 |
 * | MAP (and MULTISET)     | JSON object when the key type is a string type; otherwise an array of `[key, value]` pairs (JSON objects only have string keys, and stringifying e.g. INT keys would lose their type) |
 * | null                   | `null`                                                                           |
 *
 * The precision p of TIME/TIMESTAMP cannot be recovered from the Arrow unit (TIMESTAMP(4) is
 * stored as microseconds, and INT96 files arrive as nanoseconds whatever p is), so it is taken,
 * in order, from the Paimon type passed for the column, from the Arrow field metadata
 * `paimon.type` (a Paimon type string such as `TIMESTAMP(3)`), or else from the unit
 * (second 0, millisecond 3, microsecond 6, nanosecond 9).
 *
 * JSON objects are returned as `Map`s ({@link JsonObject}) because plain objects reorder
 * integer-like keys (`{"2":..,"1":..}` would print `"1"` first) and treat `__proto__` specially;
 * {@link stringifyJson} prints them in insertion order.
 */
import { DataType as ArrowDataType, Field, makeVector, Schema, TimeUnit, DateUnit, Type } from 'apache-arrow';
import type { Data, RecordBatch } from 'apache-arrow';

/** A JSON value as produced by the formatters; objects are insertion-ordered `Map`s. */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
/** A JSON object whose key order is the order of insertion (schema order for ROW). */
export type JsonObject = Map<string, JsonValue>;

/**
 * The subset of `@tidemark/format`'s Paimon `DataType` the formatter reads. Declared
 * structurally so any Paimon `DataType` (or `DataField[]` for ROW) can be passed as is.
 */
export interface PaimonTypeHint {
  readonly root: string;
  readonly precision?: number;
  readonly scale?: number;
  readonly element?: PaimonTypeHint;
  readonly key?: PaimonTypeHint;
  readonly value?: PaimonTypeHint;
  readonly fields?: readonly { readonly name: string; readonly type: PaimonTypeHint }[];
}

/** Formats the value at `index` of one column chunk (`index` is relative to the Data's offset). */
export type ValueFormatter = (data: Data, index: number) => JsonValue;

/** Field metadata key that may hold the Paimon type string of a column (e.g. `TIMESTAMP(3)`). */
export const PAIMON_TYPE_METADATA_KEY = 'paimon.type';

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = -MAX_SAFE;
const utf8 = new TextDecoder('utf-8');

/**
 * Builds the formatter of one column from its Arrow field and, when known, its Paimon type.
 * Build it once per column and reuse it for every batch.
 */
export function createValueFormatter(field: Field, paimonType?: PaimonTypeHint): ValueFormatter {
  const inner = compile(field, paimonType);
  return (data, index) => (data.getValid(index) ? inner(data, index) : null);
}

function compile(field: Field, hint: PaimonTypeHint | undefined): ValueFormatter {
  const type = field.type as ArrowDataType;
  switch (type.typeId) {
    case Type.Null:
      return () => null;
    case Type.Bool:
      return (d, i) => {
        const bit = d.offset + i;
        return ((d.values[bit >> 3]! >> (bit & 7)) & 1) === 1;
      };
    case Type.Int:
      return (d, i) => {
        const v = d.values[i] as number | bigint;
        return typeof v === 'bigint' ? bigintToJson(v) : v;
      };
    case Type.Float:
      return floatFormatter(field);
    case Type.Decimal: {
      const { scale, bitWidth } = type as unknown as { scale: number; bitWidth: number };
      const words = bitWidth / 32;
      return (d, i) => formatDecimal(readTwosComplement(d.values as Uint32Array, i * words, words), scale);
    }
    case Type.Utf8:
    case Type.LargeUtf8:
      return (d, i) => utf8.decode(variableBytes(d, i));
    case Type.Binary:
    case Type.LargeBinary:
      return (d, i) => toBase64(variableBytes(d, i));
    case Type.FixedSizeBinary: {
      const width = (type as unknown as { byteWidth: number }).byteWidth;
      return (d, i) => toBase64((d.values as Uint8Array).subarray(i * width, (i + 1) * width));
    }
    case Type.Date:
      return dateFormatter(type);
    case Type.Time: {
      const digits = unitDigits((type as unknown as { unit: TimeUnit }).unit);
      const p = precisionFrom(field, hint, 'TIME') ?? digits;
      return (d, i) => formatTimeOfDay(BigInt(d.values[i] as number | bigint), digits, p);
    }
    case Type.Timestamp:
      return timestampFormatter(field, hint);
    case Type.List:
    case Type.LargeList:
      return listFormatter(field, hint);
    case Type.FixedSizeList:
      return fixedSizeListFormatter(field, hint);
    case Type.Struct:
      return structFormatter(field, hint);
    case Type.Map:
      return mapFormatter(field, hint);
    case Type.Dictionary:
      return dictionaryFormatter(field, hint);
    default:
      return fallback(field);
  }
}

/** A formatter that gives null for a null slot (children of nested values carry their own validity). */
function nullable(f: ValueFormatter): ValueFormatter {
  return (d, i) => (d.getValid(i) ? f(d, i) : null);
}

function floatFormatter(field: Field): ValueFormatter {
  const precision = (field.type as unknown as { precision: number }).precision;
  if (precision === 0) return fallback(field); // HALF: no Paimon type maps here
  return precision === 1 ? (d, i) => floatToJson(shortestFloat32(d.values[i] as number)) : (d, i) => floatToJson(d.values[i] as number);
}

function dateFormatter(type: ArrowDataType): ValueFormatter {
  const unit = (type as unknown as { unit: DateUnit }).unit;
  return unit === DateUnit.DAY
    ? (d, i) => formatDate(Number(d.values[i]))
    : (d, i) => formatDate(Number(floorDiv(BigInt(d.values[i] as number | bigint), 86_400_000n)));
}

/** `YYYY-MM-DDTHH:MM:SS[.f…]`, with `Z` for TIMESTAMP_LTZ, at the column's Paimon precision. */
function timestampFormatter(field: Field, hint: PaimonTypeHint | undefined): ValueFormatter {
  const { unit, timezone } = field.type as unknown as { unit: TimeUnit; timezone: string | null };
  const digits = unitDigits(unit);
  const p = precisionFrom(field, hint, 'TIMESTAMP') ?? digits;
  const ltz = isLocalZoned(field, hint, timezone);
  const perSecond = 10n ** BigInt(digits);
  return (d, i) => {
    const v = BigInt(d.values[i] as bigint);
    const seconds = floorDiv(v, perSecond);
    const fraction = v - seconds * perSecond;
    const days = floorDiv(seconds, 86_400n);
    const secondOfDay = seconds - days * 86_400n;
    const time = formatTimeOfDay(secondOfDay * perSecond + fraction, digits, p);
    return `${formatDate(Number(days))}T${time}${ltz ? 'Z' : ''}`;
  };
}

function listFormatter(field: Field, hint: PaimonTypeHint | undefined): ValueFormatter {
  const childFormat = nullable(compile(field.type.children[0]!, hint?.element));
  return (d, i) => {
    const offsets = d.valueOffsets as Int32Array | BigInt64Array;
    const begin = Number(offsets[i]);
    const end = Number(offsets[i + 1]);
    const childData = d.children[0]!;
    const out: JsonValue[] = [];
    for (let j = begin; j < end; j++) out.push(childFormat(childData, j));
    return out;
  };
}

function fixedSizeListFormatter(field: Field, hint: PaimonTypeHint | undefined): ValueFormatter {
  const size = (field.type as unknown as { listSize: number }).listSize;
  const childFormat = nullable(compile(field.type.children[0]!, hint?.element));
  return (d, i) => {
    const childData = d.children[0]!;
    const out: JsonValue[] = [];
    for (let j = i * size; j < (i + 1) * size; j++) out.push(childFormat(childData, j));
    return out;
  };
}

/** ROW: an object with the fields in declaration order, each typed by the hint's field of that name (or position). */
function structFormatter(field: Field, hint: PaimonTypeHint | undefined): ValueFormatter {
  const children = field.type.children as Field[];
  const formats = children.map((c, k) =>
    nullable(compile(c, hint?.fields?.find((f) => f.name === c.name)?.type ?? hint?.fields?.[k]?.type)),
  );
  return (d, i) => {
    const out: JsonObject = new Map();
    children.forEach((c, k) => out.set(c.name, formats[k]!(d.children[k]!, i)));
    return out;
  };
}

/** MAP and MULTISET: an object when the keys are strings, else `[key, value]` pairs. */
function mapFormatter(field: Field, hint: PaimonTypeHint | undefined): ValueFormatter {
  const entries = field.type.children[0]! as Field;
  const [keyField, valueField] = entries.type.children as Field[];
  // MULTISET<T> is MAP<T, INT NOT NULL> on disk.
  const keyHint = hint?.root === 'MULTISET' ? hint.element : hint?.key;
  const valueHint = hint?.root === 'MULTISET' ? undefined : hint?.value;
  const keyFormat = nullable(compile(keyField!, keyHint));
  const valueFormat = nullable(compile(valueField!, valueHint));
  const stringKeys = isStringType(keyField!.type as ArrowDataType);
  return (d, i) => {
    const offsets = d.valueOffsets as Int32Array;
    const entryData = d.children[0]!;
    const keys = entryData.children[0]!;
    const values = entryData.children[1]!;
    if (stringKeys) {
      const out: JsonObject = new Map();
      for (let j = offsets[i]!; j < offsets[i + 1]!; j++) out.set(keyFormat(keys, j) as string, valueFormat(values, j));
      return out;
    }
    const out: JsonValue[] = [];
    for (let j = offsets[i]!; j < offsets[i + 1]!; j++) out.push([keyFormat(keys, j), valueFormat(values, j)]);
    return out;
  };
}

/** A dictionary-encoded column: the value its index names, across the dictionary's chunks. */
function dictionaryFormatter(field: Field, hint: PaimonTypeHint | undefined): ValueFormatter {
  const valueField = new Field(field.name, (field.type as unknown as { dictionary: ArrowDataType }).dictionary, true, field.metadata);
  const valueFormat = nullable(compile(valueField, hint));
  return (d, i) => {
    const key = Number(d.values[i]);
    const chunks = d.dictionary?.data ?? [];
    let rest = key;
    for (const chunk of chunks) {
      if (rest < chunk.length) return valueFormat(chunk, rest);
      rest -= chunk.length;
    }
    throw new RangeError(`dictionary index ${key} out of range in column '${field.name}'`);
  };
}

/** Types no Paimon type maps to (Float16, views, unions, intervals, durations): Arrow's own getter. */
function fallback(_field: Field): ValueFormatter {
  return (d, i) => plainToJson(makeVector(d).get(i));
}

function plainToJson(v: unknown): JsonValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return bigintToJson(v);
  if (typeof v === 'number') return floatToJson(v);
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (v instanceof Uint8Array) return toBase64(v);
  if (ArrayBuffer.isView(v)) return Array.from(v as unknown as ArrayLike<number | bigint>, plainToJson);
  if (Array.isArray(v)) return v.map(plainToJson);
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return plainToJson((v as { toJSON(): unknown }).toJSON());
  return String(v);
}

function isStringType(type: ArrowDataType): boolean {
  if (type.typeId === Type.Dictionary) return isStringType((type as unknown as { dictionary: ArrowDataType }).dictionary);
  return type.typeId === Type.Utf8 || type.typeId === Type.LargeUtf8 || type.typeId === Type.Utf8View;
}

function variableBytes(d: Data, i: number): Uint8Array {
  const offsets = d.valueOffsets as Int32Array | BigInt64Array;
  return (d.values as Uint8Array).subarray(Number(offsets[i]), Number(offsets[i + 1]));
}

function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/** BIGINT rule: a JSON number when it round-trips exactly, else a string of digits. */
export function bigintToJson(v: bigint): number | string {
  return v >= MIN_SAFE && v <= MAX_SAFE ? Number(v) : v.toString();
}

/** FLOAT/DOUBLE rule: numbers, with non-finite values as strings (JSON has no NaN). */
export function floatToJson(v: number): number | string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return 'Infinity';
  if (v === -Infinity) return '-Infinity';
  return v;
}

/** The shortest decimal number that reads back as the same float32 (what Java's Float.toString prints). */
function shortestFloat32(v: number): number {
  if (!Number.isFinite(v) || v === 0) return v;
  for (let p = 1; p <= 9; p++) {
    const candidate = Number(v.toPrecision(p));
    if (Math.fround(candidate) === v) return candidate;
  }
  return v;
}

/** Reads a little-endian two's-complement integer of `words` 32-bit words starting at word `start`. */
export function readTwosComplement(words32: Uint32Array, start: number, words: number): bigint {
  let v = 0n;
  for (let w = words - 1; w >= 0; w--) v = (v << 32n) | BigInt(words32[start + w]!);
  const bits = BigInt(words * 32);
  return v >= 1n << (bits - 1n) ? v - (1n << bits) : v;
}

/** DECIMAL rule: the unscaled integer printed with exactly `scale` fraction digits, e.g. (-5n, 2) → `-0.05`. */
export function formatDecimal(unscaled: bigint, scale: number): string {
  const negative = unscaled < 0n;
  const digits = (negative ? -unscaled : unscaled).toString();
  let body: string;
  if (scale <= 0) {
    body = unscaled === 0n ? '0' : digits + '0'.repeat(-scale);
  } else {
    const padded = digits.padStart(scale + 1, '0');
    body = `${padded.slice(0, padded.length - scale)}.${padded.slice(padded.length - scale)}`;
  }
  return negative ? `-${body}` : body;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

/** DATE rule: days since 1970-01-01 as `YYYY-MM-DD` (proleptic Gregorian, as java.time). */
export function formatDate(days: number): string {
  // Howard Hinnant's civil_from_days; exact for every Int32 day count.
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1_460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const y = year < 0 ? `-${String(-year).padStart(4, '0')}` : year > 9999 ? `+${year}` : String(year).padStart(4, '0');
  return `${y}-${pad2(month)}-${pad2(day)}`;
}

/**
 * `HH:MM:SS[.f…]` from a count of `10^-digits` seconds since midnight, printed with exactly
 * `precision` fraction digits (truncating finer digits, padding with zeros when the unit is coarser).
 */
function formatTimeOfDay(units: bigint, digits: number, precision: number): string {
  const perSecond = 10n ** BigInt(digits);
  const totalSeconds = Number(floorDiv(units, perSecond));
  const fraction = units - BigInt(totalSeconds) * perSecond;
  const hms = `${pad2(Math.floor(totalSeconds / 3600))}:${pad2(Math.floor(totalSeconds / 60) % 60)}:${pad2(totalSeconds % 60)}`;
  if (precision <= 0) return hms;
  const f = digits === 0 ? '' : fraction.toString().padStart(digits, '0');
  return `${hms}.${f.padEnd(precision, '0').slice(0, precision)}`;
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

function unitDigits(unit: TimeUnit): number {
  return unit === TimeUnit.SECOND ? 0 : unit === TimeUnit.MILLISECOND ? 3 : unit === TimeUnit.MICROSECOND ? 6 : 9;
}

/** Precision of a TIME/TIMESTAMP column from the Paimon type, else from `paimon.type` metadata. */
function precisionFrom(field: Field, hint: PaimonTypeHint | undefined, family: 'TIME' | 'TIMESTAMP'): number | undefined {
  if (hint && hint.root.startsWith(family) && hint.precision !== undefined) return hint.precision;
  const parsed = parseTypeString(field.metadata.get(PAIMON_TYPE_METADATA_KEY));
  if (parsed && parsed.family === family) return parsed.precision;
  return undefined;
}

function isLocalZoned(field: Field, hint: PaimonTypeHint | undefined, timezone: string | null): boolean {
  if (hint?.root === 'TIMESTAMP_LTZ') return true;
  if (hint?.root === 'TIMESTAMP') return false;
  const parsed = parseTypeString(field.metadata.get(PAIMON_TYPE_METADATA_KEY));
  if (parsed?.family === 'TIMESTAMP') return parsed.ltz;
  return timezone !== null && timezone !== '';
}

/**
 * Reads the family and precision out of a Paimon type string: `TIMESTAMP(3)`,
 * `TIMESTAMP(6) WITH LOCAL TIME ZONE`, `TIMESTAMP_LTZ(9)`, `TIME(0)`, also JSON-quoted and with
 * ` NOT NULL`. Without parentheses Paimon's defaults apply (TIMESTAMP 6, TIME 0).
 */
function parseTypeString(s: string | undefined): { family: 'TIME' | 'TIMESTAMP'; precision: number; ltz: boolean } | undefined {
  if (!s) return undefined;
  const m = /^\s*"?\s*(TIMESTAMP_LTZ|TIMESTAMP|TIME)\s*(?:\(\s*(\d+)\s*\))?(.*)$/i.exec(s);
  if (!m) return undefined;
  const word = m[1]!.toUpperCase();
  const family = word === 'TIME' ? 'TIME' : 'TIMESTAMP';
  const precision = m[2] !== undefined ? Number(m[2]) : family === 'TIME' ? 0 : 6;
  const ltz = word === 'TIMESTAMP_LTZ' || /LOCAL\s+TIME\s+ZONE/i.test(m[3] ?? '');
  return { family, precision, ltz };
}

/** Prints a {@link JsonValue} as JSON text, keeping the insertion order of {@link JsonObject}s. */
export function stringifyJson(value: JsonValue): string {
  if (value === null) return 'null';
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(stringifyJson).join(',')}]`;
  let out = '{';
  let first = true;
  for (const [k, v] of value) {
    out += `${first ? '' : ','}${JSON.stringify(k)}:${stringifyJson(v)}`;
    first = false;
  }
  return `${out}}`;
}

/** Formats whole rows of record batches that share one schema. */
export interface RowFormatter {
  /** Column names in schema order. */
  readonly columns: readonly string[];
  /** The formatted values of row `row` of `batch`, in schema order. */
  formatRow(batch: RecordBatch, row: number): JsonValue[];
  /** Row `row` of `batch` as one JSON object text (no newline): keys are the column names in schema order. */
  formatJsonLine(batch: RecordBatch, row: number): string;
}

/**
 * Builds a {@link RowFormatter} for `schema`.
 *
 * @param columnTypes - optional Paimon type of each column, in schema order (e.g. the table
 *   schema's fields' types after projection); `undefined` entries fall back to field metadata
 *   and the Arrow type.
 */
export function createRowFormatter(schema: Schema, columnTypes?: readonly (PaimonTypeHint | undefined)[]): RowFormatter {
  const fields = schema.fields as Field[];
  const formats = fields.map((f, k) => createValueFormatter(f, columnTypes?.[k]));
  const columns = fields.map((f) => f.name);
  const keys = columns.map((c) => JSON.stringify(c));
  return {
    columns,
    formatRow(batch, row) {
      const kids = batch.data.children;
      return formats.map((fmt, k) => fmt(kids[k]!, row));
    },
    formatJsonLine(batch, row) {
      const kids = batch.data.children;
      let out = '{';
      for (let k = 0; k < formats.length; k++) out += `${k === 0 ? '' : ','}${keys[k]!}:${stringifyJson(formats[k]!(kids[k]!, row))}`;
      return `${out}}`;
    },
  };
}
