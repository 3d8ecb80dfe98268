/**
 * Conversion of the JS values a caller passes in row objects to tidemark's internal value
 * representation (format/values.ts), with type and range checks.
 *
 * Accepted input forms per Paimon type (`null` / `undefined` = SQL NULL everywhere):
 *
 * | type | accepted |
 * |---|---|
 * | BOOLEAN | `boolean`, `'true'` / `'false'` |
 * | TINYINT, SMALLINT, INT | integer `number` or `bigint` in range, integer string |
 * | BIGINT | `bigint`, safe-integer `number`, integer string |
 * | FLOAT, DOUBLE | `number`, numeric string (`'NaN'`, `'Infinity'` too); FLOAT must fit a float32 |
 * | DECIMAL(p, s) | `{ unscaled: bigint, scale }`, decimal string (`'-12.50'`, `'1e3'`), `bigint`, `number` (rounded half-up to s); strings and objects must fit scale s exactly; at most p digits |
 * | CHAR(n), VARCHAR(n), STRING | `string` of at most n code points |
 * | BINARY(n), VARBINARY(n), BYTES | `Uint8Array` (incl. Buffer) or `ArrayBuffer` of at most n bytes |
 * | DATE | `number` days since 1970-01-01, `Date` (its UTC day), `'YYYY-MM-DD'` |
 * | TIME(p) | `number` milliseconds of the day, `'HH:mm[:ss[.fff]]'` |
 * | TIMESTAMP(p), TIMESTAMP_LTZ(p) | `Date`, `number` epoch millis, `{ millis, nanoOfMillis }`, `bigint` epoch value in the column's Arrow unit (ms for p ≤ 3, µs for p ≤ 6, ns above), ISO string `'YYYY-MM-DD[T ]HH:mm[:ss[.fffffffff]]'` (TIMESTAMP_LTZ also with `Z` / `±hh:mm`); non-zero digits below the precision are refused |
 * | ARRAY<T> | JS array of T values |
 * | MAP<K, V> | `Map`, array of `[key, value]` pairs, or plain object (keys parsed as K) |
 * | MULTISET<T> | `Map` / object element → count, or an array of elements |
 * | ROW<…> | object by field name, or array in field order |
 *
 * Timestamps without time zone are wall-clock values stored as if UTC (a `Date` contributes its
 * UTC fields).
 */
import { MAX_LENGTH, typeToString, type DataType, type Decimal, type Timestamp, type Value } from '@tidemark/format';

/** Internal value incl. nested types: ARRAY/ROW as arrays, MAP/MULTISET as arrays of `[key, value]`. */
export type WriteValue = Value | readonly WriteValue[];

/** Thrown by {@link toInternal}; the caller adds the column and row to the message. */
export class ConversionFailure extends Error {
  constructor(
    message: string,
    /** Dotted path below the top-level column (for nested fields). */
    readonly subPath = '',
  ) {
    super(message);
  }
}

const MS_PER_DAY = 86_400_000;
const INT_RANGES: Record<string, [number, number]> = {
  TINYINT: [-128, 127],
  SMALLINT: [-32768, 32767],
  INT: [-2147483648, 2147483647],
  DATE: [-2147483648, 2147483647],
};
const FLOAT_MAX = 3.4028234663852886e38;

function show(v: unknown): string {
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v);
  if (v instanceof Date) return `Date(${isNaN(v.getTime()) ? 'invalid' : v.toISOString()})`;
  if (v instanceof Uint8Array) return `Uint8Array(${v.length})`;
  if (Array.isArray(v)) return `array(${v.length})`;
  if (typeof v === 'object' && v !== null) return `object`;
  return String(v);
}

function fail(type: DataType, v: unknown, why?: string): never {
  throw new ConversionFailure(`expected ${typeToString({ ...type, nullable: true } as DataType)}${why ? ` (${why})` : ''}, got ${show(v)}`);
}

/**
 * Converts one JS value to the internal representation of `type`; null/undefined → null (the
 * caller checks NOT NULL of top-level columns; nested NOT NULL is checked here).
 *
 * @throws ConversionFailure describing the expected type and the value received.
 */
export function toInternal(type: DataType, v: unknown): WriteValue {
  if (v === null || v === undefined) return null;
  switch (type.root) {
    case 'BOOLEAN':
      if (typeof v === 'boolean') return v;
      if (v === 'true' || v === 'false') return v === 'true';
      return fail(type, v);
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT': {
      const [lo, hi] = INT_RANGES[type.root]!;
      let n: number;
      if (typeof v === 'number') n = v;
      else if (typeof v === 'bigint') n = v >= BigInt(lo) && v <= BigInt(hi) ? Number(v) : NaN;
      else if (typeof v === 'string' && /^\s*[+-]?\d+\s*$/.test(v)) n = Number(v);
      else return fail(type, v);
      if (!Number.isInteger(n) || n < lo || n > hi) fail(type, v, `an integer in ${lo}..${hi}`);
      return n;
    }
    case 'BIGINT': {
      let b: bigint;
      if (typeof v === 'bigint') b = v;
      else if (typeof v === 'number') {
        if (!Number.isSafeInteger(v)) fail(type, v, 'numbers must be safe integers; pass a bigint');
        b = BigInt(v);
      } else if (typeof v === 'string' && /^\s*[+-]?\d+\s*$/.test(v)) b = BigInt(v.trim());
      else return fail(type, v);
      if (BigInt.asIntN(64, b) !== b) fail(type, v, 'out of the 64-bit range');
      return b;
    }
    case 'FLOAT':
    case 'DOUBLE': {
      let n: number;
      if (typeof v === 'number') n = v;
      else if (typeof v === 'string' && v.trim() !== '' && (!Number.isNaN(Number(v)) || v.trim() === 'NaN')) n = Number(v);
      else return fail(type, v);
      if (type.root === 'FLOAT') {
        if (Number.isFinite(n) && Math.abs(n) > FLOAT_MAX) fail(type, v, 'out of the float32 range');
        return Math.fround(n);
      }
      return n;
    }
    case 'DECIMAL':
      return toDecimal(type, v);
    case 'CHAR':
    case 'VARCHAR':
      if (typeof v !== 'string') return fail(type, v);
      // UTF-8 cannot hold a lone surrogate: the encoder would store U+FFFD instead.
      if (!(v as unknown as { isWellFormed(): boolean }).isWellFormed()) fail(type, v, 'a lone UTF-16 surrogate has no UTF-8 form');
      if (type.length < MAX_LENGTH && v.length > type.length && codePointCount(v) > type.length) {
        fail(type, v, `longer than ${type.length} characters`);
      }
      return v;
    case 'BINARY':
    case 'VARBINARY': {
      const bytes = v instanceof Uint8Array ? v : v instanceof ArrayBuffer ? new Uint8Array(v) : undefined;
      if (!bytes) return fail(type, v);
      if (type.length < MAX_LENGTH && bytes.length > type.length) fail(type, v, `longer than ${type.length} bytes`);
      return bytes;
    }
    case 'DATE': {
      let d: number;
      if (typeof v === 'number') d = v;
      else if (v instanceof Date) d = Math.floor(v.getTime() / MS_PER_DAY);
      else if (typeof v === 'string') d = parseDate(v) ?? NaN;
      else return fail(type, v);
      if (!Number.isInteger(d)) fail(type, v, "days since 1970-01-01, a Date or 'YYYY-MM-DD'");
      return d;
    }
    case 'TIME': {
      let ms: number;
      if (typeof v === 'number') ms = v;
      else if (typeof v === 'string') ms = parseTime(v) ?? NaN;
      else return fail(type, v);
      if (!Number.isInteger(ms) || ms < 0 || ms >= MS_PER_DAY) fail(type, v, "milliseconds of the day or 'HH:mm:ss'");
      // Digits below the precision are refused, as DECIMAL refuses extra scale: never cut silently.
      if (truncateTime(ms, type.precision) !== ms) fail(type, v, `more than ${type.precision} fractional second digits`);
      return ms;
    }
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ': {
      const t = toTimestamp(type, v);
      const cut = truncateTimestamp(t, type.precision);
      if (cut.millis !== t.millis || cut.nanoOfMillis !== t.nanoOfMillis)
        fail(type, v, `more than ${type.precision} fractional second digits`);
      return t;
    }
    case 'ARRAY': {
      if (!Array.isArray(v)) return fail(type, v);
      return v.map((e, i) => nested(type.element, e, `[${i}]`));
    }
    case 'MAP': {
      const entries = mapEntries(type, v);
      return entries.map(([k, val], i) => {
        const key = nested(type.key, k, `[${i}].key`);
        if (key === null) throw new ConversionFailure('map keys must not be null', `[${i}].key`);
        return [key, nested(type.value, val, `[${i}].value`)];
      });
    }
    case 'MULTISET': {
      let entries: [unknown, unknown][];
      if (Array.isArray(v)) {
        const counts = new Map<unknown, number>();
        for (const e of v) counts.set(e, (counts.get(e) ?? 0) + 1);
        entries = [...counts];
      } else entries = mapEntries(type, v);
      return entries.map(([k, c], i) => {
        const key = nested(type.element, k, `[${i}]`);
        if (key === null) throw new ConversionFailure('multiset elements must not be null', `[${i}]`);
        return [key, nested({ root: 'INT', nullable: false }, c, `[${i}].count`)];
      });
    }
    case 'ROW': {
      if (Array.isArray(v)) {
        if (v.length !== type.fields.length) fail(type, v, `${type.fields.length} fields`);
        return type.fields.map((f, i) => nested(f.type, v[i], f.name));
      }
      if (typeof v !== 'object' || v instanceof Date || v instanceof Uint8Array) return fail(type, v);
      const obj = v as Record<string, unknown>;
      for (const k of Object.keys(obj)) {
        if (!type.fields.some((f) => f.name === k)) throw new ConversionFailure(`unknown field '${k}'`, k);
      }
      return type.fields.map((f) => nested(f.type, obj[f.name], f.name));
    }
  }
}

function nested(type: DataType, v: unknown, path: string): WriteValue {
  let out: WriteValue;
  try {
    out = toInternal(type, v);
  } catch (e) {
    if (e instanceof ConversionFailure) throw new ConversionFailure(e.message, joinSub(path, e.subPath));
    throw e;
  }
  if (out === null && !type.nullable) throw new ConversionFailure('NULL in a NOT NULL field', path);
  return out;
}

function joinSub(a: string, b: string): string {
  if (b === '') return a;
  return b.startsWith('[') ? a + b : `${a}.${b}`;
}

function mapEntries(type: DataType, v: unknown): [unknown, unknown][] {
  if (v instanceof Map) return [...v.entries()];
  if (Array.isArray(v)) {
    if (!v.every((e) => Array.isArray(e) && e.length === 2)) fail(type, v, 'an array of [key, value] pairs');
    return v as [unknown, unknown][];
  }
  if (typeof v === 'object' && v !== null && !(v instanceof Uint8Array) && !(v instanceof Date)) return Object.entries(v);
  return fail(type, v);
}

function codePointCount(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

function toDecimal(type: Extract<DataType, { root: 'DECIMAL' }>, v: unknown): Decimal {
  let unscaled: bigint;
  if (typeof v === 'object' && v !== null && typeof (v as Decimal).unscaled === 'bigint' && Number.isInteger((v as Decimal).scale)) {
    const d = v as Decimal;
    unscaled = exactRescale(type, v, d.unscaled, d.scale);
  } else if (typeof v === 'bigint') {
    unscaled = v * 10n ** BigInt(type.scale);
  } else if (typeof v === 'string') {
    const parsed = parseDecimalString(v);
    if (!parsed) return fail(type, v);
    unscaled = exactRescale(type, v, parsed.unscaled, parsed.scale);
  } else if (typeof v === 'number') {
    if (!Number.isFinite(v)) return fail(type, v);
    // Shortest round-trip text of the double, then half-up rounding to the column scale.
    const parsed = parseDecimalString(String(v))!;
    unscaled = roundHalfUp(parsed.unscaled, parsed.scale, type.scale);
  } else return fail(type, v);
  const limit = 10n ** BigInt(type.precision);
  if (unscaled >= limit || unscaled <= -limit) fail(type, v, `more than ${type.precision} digits`);
  return { unscaled, scale: type.scale };
}

function exactRescale(type: DataType & { scale: number }, v: unknown, unscaled: bigint, scale: number): bigint {
  if (scale <= type.scale) return unscaled * 10n ** BigInt(type.scale - scale);
  const f = 10n ** BigInt(scale - type.scale);
  if (unscaled % f !== 0n) fail(type, v, `more than ${type.scale} fractional digits`);
  return unscaled / f;
}

function roundHalfUp(unscaled: bigint, scale: number, target: number): bigint {
  if (scale <= target) return unscaled * 10n ** BigInt(target - scale);
  const f = 10n ** BigInt(scale - target);
  const q = unscaled / f;
  const r = unscaled % f;
  const twice = (r < 0n ? -r : r) * 2n;
  if (twice >= f) return unscaled < 0n ? q - 1n : q + 1n;
  return q;
}

/** Parses `-12.345`, `.5`, `1e3`, `1.5E-2` into unscaled + scale. */
export function parseDecimalString(s: string): Decimal | undefined {
  const m = /^\s*([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\s*$/.exec(s);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return undefined;
  const frac = m[3] ?? '';
  let unscaled = BigInt((m[2] || '0') + frac);
  let scale = frac.length - Number(m[4] ?? 0);
  if (scale < 0) {
    unscaled *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { unscaled: m[1] === '-' ? -unscaled : unscaled, scale };
}

/** Days since the epoch of a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
export function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function parseDate(s: string): number | undefined {
  const m = /^\s*([+-]?\d{4,})-(\d{2})-(\d{2})\s*$/.exec(s);
  if (!m) return undefined;
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return undefined;
  return daysFromCivil(y, mo, d);
}

function daysInMonth(y: number, m: number): number {
  if (m === 2) return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(m) ? 30 : 31;
}

/** `HH:mm[:ss[.fffffffff]]` → [millis of day, nanos within the millisecond]. */
function parseClock(s: string): [number, number] | undefined {
  const m = /^(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?$/.exec(s);
  if (!m) return undefined;
  const h = Number(m[1]);
  const mi = Number(m[2]);
  const sec = Number(m[3] ?? 0);
  if (h > 23 || mi > 59 || sec > 59) return undefined;
  const nanos = Number((m[4] ?? '').padEnd(9, '0'));
  return [h * 3_600_000 + mi * 60_000 + sec * 1000 + Math.floor(nanos / 1_000_000), nanos % 1_000_000];
}

function parseTime(s: string): number | undefined {
  return parseClock(s.trim())?.[0];
}

function truncateTime(ms: number, precision: number): number {
  const unit = precision >= 3 ? 1 : 10 ** (3 - precision);
  return ms - (ms % unit);
}

function toTimestamp(type: Extract<DataType, { root: 'TIMESTAMP' | 'TIMESTAMP_LTZ' }>, v: unknown): Timestamp {
  if (v instanceof Date) {
    const t = v.getTime();
    if (Number.isNaN(t)) fail(type, v);
    return { millis: t, nanoOfMillis: 0 };
  }
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) fail(type, v, 'epoch milliseconds must be an integer');
    return { millis: v, nanoOfMillis: 0 };
  }
  if (typeof v === 'bigint') {
    const perMilli = type.precision <= 3 ? 1n : type.precision <= 6 ? 1000n : 1_000_000n;
    let q = v / perMilli;
    let r = v % perMilli;
    if (r < 0n) {
      q -= 1n;
      r += perMilli;
    }
    if (q > BigInt(Number.MAX_SAFE_INTEGER) || q < BigInt(Number.MIN_SAFE_INTEGER)) fail(type, v, 'out of range');
    return { millis: Number(q), nanoOfMillis: Number(r * (1_000_000n / perMilli)) };
  }
  if (typeof v === 'object' && v !== null && typeof (v as Timestamp).millis === 'number') {
    const t = v as Timestamp;
    const nano = t.nanoOfMillis ?? 0;
    if (!Number.isSafeInteger(t.millis) || !Number.isInteger(nano) || nano < 0 || nano > 999_999) {
      fail(type, v, 'millis must be an integer and nanoOfMillis in 0..999999');
    }
    return { millis: t.millis, nanoOfMillis: nano };
  }
  if (typeof v === 'string') {
    const m = /^\s*([+-]?\d{4,}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)\s*(Z|[+-]\d{2}:?\d{2})?\s*$/.exec(v);
    const day = m ? parseDate(m[1]!) : undefined;
    const clock = m ? parseClock(m[2]!) : undefined;
    if (!m || day === undefined || clock === undefined) return fail(type, v, "ISO text 'YYYY-MM-DD HH:mm:ss[.f]'");
    let millis = day * MS_PER_DAY + clock[0];
    const zone = m[3];
    if (zone !== undefined && zone !== 'Z') {
      const zm = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
      const offset = (Number(zm[2]) * 60 + Number(zm[3])) * 60_000;
      // A zero offset is another spelling of Z, which a TIMESTAMP takes as its wall-clock time;
      // another offset would have to shift the value, which a TIMESTAMP without time zone cannot say.
      if (type.root === 'TIMESTAMP' && offset !== 0) {
        fail(type, v, 'a TIMESTAMP without time zone takes no UTC offset other than Z or +00:00');
      }
      millis -= zm[1] === '-' ? -offset : offset;
    }
    return { millis, nanoOfMillis: clock[1] };
  }
  return fail(type, v);
}

function truncateTimestamp(t: Timestamp, precision: number): Timestamp {
  if (precision >= 9) return t;
  if (precision >= 3) {
    const unit = 10 ** (9 - precision);
    return { millis: t.millis, nanoOfMillis: t.nanoOfMillis - (t.nanoOfMillis % unit) };
  }
  const unit = 10 ** (3 - precision);
  return { millis: t.millis - (((t.millis % unit) + unit) % unit), nanoOfMillis: 0 };
}
