/**
 * The value-level cast executors of Paimon's cast rules, one per rule class, on tidemark's internal
 * values (format `values.ts`; ARRAY and ROW as arrays, MAP as `[key, value]` pairs). An executor
 * takes a non-null value and returns the value in the target type, or null where Java's returns
 * null (a DECIMAL that does not fit its precision); it throws where Java's throws.
 */
import { MAX_LENGTH, decimalToPlainString, type DataType, type Decimal, type Timestamp, type Value } from '@tidemark/format';
import { castRuleOf, type CastRuleName } from './cast-rules.js';
import {
  MILLIS_PER_DAY,
  formatDate,
  formatTime,
  formatTimestamp,
  instantToLocal,
  isNumeric,
  localToInstant,
  ltzToTimestamp,
  parseDate,
  parseTime,
  parseTimestampText,
  timestampOf,
  timestampToLtz,
  truncateTimestamp,
  JavaDateTimeError,
} from './java-datetime.js';
import {
  bigDecimalOfDouble,
  decimalDoubleValue,
  decimalFromBigDecimal,
  decimalToLong,
  doubleToIntegral,
  javaDoubleToString,
  javaFloatToString,
  javaParseDouble,
  javaParseFloat,
  javaParseIntegral,
  longToFloat,
  parseBigDecimal,
  wrapInt,
} from './java-numbers.js';

/** An internal value including nested ones (ARRAY / ROW as arrays, MAP as `[key, value]` pairs). */
export type CastValue = Value | readonly CastValue[];

/** Casts one non-null value; see the module comment. */
export type CastExecutor = (value: CastValue) => CastValue;

const STRING: DataType = { root: 'VARCHAR', nullable: true, length: MAX_LENGTH };
const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder();

/** The executor of the rule that casts `from` to `to`, with the rule's name; null when Paimon has none. */
export function castExecutor(from: DataType, to: DataType): { rule: CastRuleName; cast: CastExecutor } | null {
  const rule = castRuleOf(from, to);
  if (rule === null) return null;
  const cast = executorOf(rule, from, to);
  return cast === null ? null : { rule, cast };
}

function isIntegral(t: DataType): boolean {
  return t.root === 'TINYINT' || t.root === 'SMALLINT' || t.root === 'INT' || t.root === 'BIGINT';
}

/** The `length` of CHAR/VARCHAR/BINARY/VARBINARY. */
function lengthOf(t: DataType): number {
  return (t as { length: number }).length;
}

/** `BinaryStringUtils.toCharacterString`: at most `length` code points; CHAR padded with spaces. */
export function toCharacterString(s: string, target: DataType): string {
  const length = lengthOf(target);
  if (s.length <= length && target.root !== 'CHAR') return s; // UTF-16 units >= code points
  const points = Array.from(s);
  if (points.length > length) return points.slice(0, length).join('');
  if (points.length < length && target.root === 'CHAR') return s + ' '.repeat(length - points.length);
  return s;
}

/** `BinaryStringUtils.toBinaryString`: BINARY(n) zero-padded or cut to n bytes, VARBINARY(n) cut. */
export function toBinaryString(bytes: Uint8Array, target: DataType): Uint8Array {
  const length = lengthOf(target);
  if (bytes.length === length) return bytes;
  if (target.root === 'BINARY') {
    const out = new Uint8Array(length);
    out.set(bytes.subarray(0, length));
    return out;
  }
  return bytes.length <= length ? bytes : bytes.slice(0, length);
}

/** Java's `Integer`/`Long`/`Float`/`Double`/`Decimal` `toString()` of a numeric value of type `t`. */
function numberText(v: CastValue, t: DataType): string {
  switch (t.root) {
    case 'FLOAT':
      return javaFloatToString(v as number);
    case 'DOUBLE':
      return javaDoubleToString(v as number);
    case 'DECIMAL':
      return decimalToPlainString(v as Decimal);
    default:
      return String(v);
  }
}

/** Java's `Number.byteValue() … doubleValue()` of an integral or floating value, per target root. */
function numericPrimitive(from: DataType, to: DataType): CastExecutor {
  const floating = from.root === 'FLOAT' || from.root === 'DOUBLE';
  switch (to.root) {
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT': {
      const bits = to.root === 'TINYINT' ? 8 : to.root === 'SMALLINT' ? 16 : 32;
      // (byte) of a float is (byte) (int) f: saturate to int first, then wrap.
      return floating ? (v) => wrapInt(doubleToIntegral(v as number, 32), bits) : (v) => wrapInt(v as number | bigint, bits);
    }
    case 'BIGINT':
      return floating ? (v) => doubleToIntegral(v as number, 64) : (v) => BigInt(v as number | bigint);
    case 'FLOAT':
      return (v) => (typeof v === 'bigint' ? longToFloat(v) : Math.fround(v as number));
    default:
      return (v) => Number(v as number | bigint);
  }
}

function intoIntegral(n: bigint, to: DataType): number | bigint {
  if (to.root === 'BIGINT') return n;
  return wrapInt(n, to.root === 'TINYINT' ? 8 : to.root === 'SMALLINT' ? 16 : 32);
}

function executorOf(rule: CastRuleName, from: DataType, to: DataType): CastExecutor | null {
  const decimalTarget = to as { precision: number; scale: number };
  const precisionOf = (t: DataType): number => (t as { precision: number }).precision;
  switch (rule) {
    case 'NumericPrimitiveCastRule':
      return numericPrimitive(from, to);
    case 'DecimalToNumericPrimitiveCastRule': {
      const p = precisionOf(from);
      if (to.root === 'FLOAT') return (v) => Math.fround(decimalDoubleValue(v as Decimal, p));
      if (to.root === 'DOUBLE') return (v) => decimalDoubleValue(v as Decimal, p);
      return (v) => intoIntegral(decimalToLong(v as Decimal), to);
    }
    case 'NumericPrimitiveToDecimalCastRule':
      return isIntegral(from)
        ? (v) => decimalFromBigDecimal({ unscaled: BigInt(v as number | bigint), scale: 0 }, decimalTarget.precision, decimalTarget.scale)
        : (v) => decimalFromBigDecimal(bigDecimalOfDouble(v as number), decimalTarget.precision, decimalTarget.scale);
    case 'DecimalToDecimalCastRule':
      return (v) => decimalFromBigDecimal(v as Decimal, decimalTarget.precision, decimalTarget.scale);
    case 'NumericPrimitiveToTimestamp':
      // Seconds since the epoch; for TIMESTAMP_LTZ Java stores the local wall clock of that instant.
      return (v) => {
        const millis = BigInt.asIntN(64, BigInt(v as number | bigint) * 1000n);
        const ms = timestampOf(Number(millis)).millis;
        return timestampOf(to.root === 'TIMESTAMP_LTZ' ? instantToLocal(ms) : ms);
      };
    case 'BooleanToNumericCastRule':
      if (to.root === 'DECIMAL')
        return (v) => decimalFromBigDecimal({ unscaled: v ? 1n : 0n, scale: 0 }, decimalTarget.precision, decimalTarget.scale);
      if (to.root === 'BIGINT') return (v) => (v ? 1n : 0n);
      return (v) => (v ? 1 : 0);
    case 'NumericToBooleanCastRule':
      return (v) => v !== 0 && v !== 0n;
    case 'NumericToStringCastRule':
      return (v) => toCharacterString(numberText(v, from), to);
    case 'BooleanToStringCastRule':
      return (v) => toCharacterString(v ? 'true' : 'false', to);
    case 'TimestampToStringCastRule': {
      const p = precisionOf(from);
      const ltz = from.root === 'TIMESTAMP_LTZ';
      return (v) => toCharacterString(formatTimestamp(ltz ? ltzToTimestamp(v as Timestamp) : (v as Timestamp), p), to);
    }
    case 'TimeToStringCastRule': {
      const p = precisionOf(from);
      return (v) => toCharacterString(formatTime(v as number, p), to);
    }
    case 'DateToStringCastRule':
      return (v) => toCharacterString(formatDate(v as number), to);
    case 'StringToStringCastRule':
      return (v) => toCharacterString(v as string, to);
    case 'ArrayToStringCastRule':
    case 'MapToStringCastRule':
    case 'RowToStringCastRule':
      return nestedToString(from);
    case 'StringToBooleanCastRule':
      return (v) => {
        const lower = (v as string).toLowerCase();
        if (lower === 't' || lower === 'true' || lower === 'y' || lower === 'yes' || lower === '1') return true;
        if (lower === 'f' || lower === 'false' || lower === 'n' || lower === 'no' || lower === '0') return false;
        throw new Error(`Cannot parse '${v as string}' as BOOLEAN.`);
      };
    case 'StringToDecimalCastRule':
      return (v) => decimalFromBigDecimal(parseBigDecimal(v as string), decimalTarget.precision, decimalTarget.scale);
    case 'StringToNumericPrimitiveCastRule':
      switch (to.root) {
        case 'TINYINT':
          return (v) => Number(javaParseIntegral(v as string, 8));
        case 'SMALLINT':
          return (v) => Number(javaParseIntegral(v as string, 16));
        case 'INT':
          return (v) => Number(javaParseIntegral(v as string, 32));
        case 'BIGINT':
          return (v) => javaParseIntegral(v as string, 64);
        case 'FLOAT':
          return (v) => javaParseFloat(v as string);
        default:
          return (v) => javaParseDouble(v as string);
      }
    case 'StringToDateCastRule':
      return (v) => {
        const s = v as string;
        if (isNumeric(s)) return Number(javaParseIntegral(s, 32));
        const d = parseDate(s);
        if (d === null) throw new JavaDateTimeError(`For input string: '${s}'.`);
        return d;
      };
    case 'StringToTimeCastRule':
      return (v) => {
        const s = v as string;
        if (isNumeric(s)) return Number(javaParseIntegral(s, 32));
        const t = parseTime(s);
        if (t === null) throw new JavaDateTimeError(`For input string: '${s}'.`);
        return t;
      };
    case 'StringToTimestampCastRule': {
      const p = precisionOf(to);
      if (to.root === 'TIMESTAMP_LTZ') {
        return (v) => {
          const wall = parseTimestampText(v as string, p);
          return timestampOf(localToInstant(wall.millis), wall.nanoOfMillis);
        };
      }
      return (v) => {
        const s = v as string;
        if (!isNumeric(s)) return parseTimestampText(s, p);
        // Epoch milliseconds, cut to the precision.
        const millis = Number(javaParseIntegral(s, 64));
        const unit = p >= 3 ? 1 : 10 ** (3 - p);
        return timestampOf(Math.floor(millis / unit) * unit);
      };
    }
    case 'StringToBinaryCastRule':
      return (v) => toBinaryString(utf8.encode(v as string), to);
    case 'TimestampToTimestampCastRule': {
      const convert =
        from.root === 'TIMESTAMP' && to.root === 'TIMESTAMP_LTZ'
          ? timestampToLtz
          : from.root === 'TIMESTAMP_LTZ' && to.root === 'TIMESTAMP'
            ? ltzToTimestamp
            : (t: Timestamp) => t;
      const p = precisionOf(to);
      if (precisionOf(from) <= p) return (v) => convert(v as Timestamp);
      return (v) => truncateTimestamp(convert(v as Timestamp), p);
    }
    case 'TimestampToDateCastRule':
      if (from.root === 'TIMESTAMP_LTZ') return (v) => Math.floor(instantToLocal((v as Timestamp).millis) / MILLIS_PER_DAY);
      return (v) => Math.trunc((v as Timestamp).millis / MILLIS_PER_DAY) | 0;
    case 'TimestampToTimeCastRule':
      if (from.root === 'TIMESTAMP_LTZ') {
        return (v) => {
          const wall = instantToLocal((v as Timestamp).millis);
          return wall - Math.floor(wall / MILLIS_PER_DAY) * MILLIS_PER_DAY;
        };
      }
      return (v) => ((v as Timestamp).millis % MILLIS_PER_DAY) | 0;
    case 'DateToTimestampCastRule':
      if (to.root === 'TIMESTAMP_LTZ') return (v) => timestampOf(localToInstant((v as number) * MILLIS_PER_DAY));
      return (v) => timestampOf((v as number) * MILLIS_PER_DAY);
    case 'TimeToTimestampCastRule':
      if (to.root === 'TIMESTAMP_LTZ') return (v) => timestampOf(localToInstant(instantToLocal(v as number)));
      return (v) => timestampOf(v as number);
    case 'TimestampToNumericPrimitiveCastRule': {
      // Seconds, truncated toward zero (Java's long division); INT wraps.
      if (to.root === 'BIGINT') return (v) => BigInt(Math.trunc((v as Timestamp).millis / 1000));
      return (v) => wrapInt(BigInt(Math.trunc((v as Timestamp).millis / 1000)), 32);
    }
    case 'BinaryToBinaryCastRule':
      return (v) => toBinaryString(v as Uint8Array, to);
    case 'BinaryToStringCastRule':
      return (v) => utf8Decoder.decode(v as Uint8Array);
    default:
      // String → ARRAY / MAP / ROW: DataTypeCasts never allows them.
      return null;
  }
}

/** `ArrayToStringCastRule`, `MapToStringCastRule`, `RowToStringCastRule`: `[a, b]`, `{k -> v}`, `{a, b}`. */
function nestedToString(from: DataType): CastExecutor {
  const toText = (t: DataType): ((v: CastValue) => string) => {
    const e = castExecutor(t, STRING);
    return (v) => {
      if (v === null) return 'null';
      if (e === null) throw new Error(`no cast rule from ${t.root} to STRING`);
      return String(e.cast(v));
    };
  };
  if (from.root === 'ARRAY') {
    const el = toText(from.element);
    return (v) => `[${(v as readonly CastValue[]).map(el).join(', ')}]`;
  }
  if (from.root === 'MAP') {
    const k = toText(from.key);
    const val = toText(from.value);
    return (v) => `{${(v as readonly (readonly CastValue[])[]).map((e) => `${k(e[0] ?? null)} -> ${val(e[1] ?? null)}`).join(', ')}}`;
  }
  const fields = (from as Extract<DataType, { root: 'ROW' }>).fields.map((f) => toText(f.type));
  return (v) => `{${(v as readonly CastValue[]).map((x, i) => fields[i]!(x)).join(', ')}}`;
}
