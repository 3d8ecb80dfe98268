/**
 * Paimon's cast rules value by value: each `describe` is one rule class of
 * `org.apache.paimon.casting` and states what its Java source does (the JDK routines it calls —
 * `Double.toString`, `BigDecimal`, java.time — included), e.g. HALF_UP for DECIMAL, `(byte) (int) d`
 * for DOUBLE → TINYINT, division toward zero for TIMESTAMP → DATE.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseTypeString } from '@tidemark/format';
import { castExecutor, type CastValue } from '../src/cast/cast-executors.js';

function cast(from: string, to: string, v: CastValue): CastValue {
  const e = castExecutor(parseTypeString(from), parseTypeString(to));
  if (e === null) throw new Error(`no cast rule from ${from} to ${to}`);
  return e.cast(v);
}

function ruleOf(from: string, to: string): string | undefined {
  return castExecutor(parseTypeString(from), parseTypeString(to))?.rule;
}

const dec = (unscaled: bigint, scale: number): CastValue => ({ unscaled, scale });
const ts = (millis: number, nanoOfMillis = 0): CastValue => ({ millis, nanoOfMillis });
const utc = (iso: string): number => Date.parse(iso + 'Z');

/** TIMESTAMP_LTZ casts use the local time zone (Java: the JVM default): pin one without DST. */
function inZone(zone: string): void {
  let saved: string | undefined;
  beforeEach(() => {
    saved = process.env.TZ;
    process.env.TZ = zone;
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.TZ;
    else process.env.TZ = saved;
  });
}

describe('NumericPrimitiveCastRule: Java primitive conversions (Number.byteValue() … doubleValue())', () => {
  it('integers narrow by two-complement wrap-around', () => {
    expect(ruleOf('BIGINT', 'INT')).toBe('NumericPrimitiveCastRule');
    expect(cast('BIGINT', 'INT', 4294967301n)).toBe(5);
    expect(cast('BIGINT', 'INT', 2147483648n)).toBe(-2147483648);
    expect(cast('INT', 'TINYINT', 300)).toBe(44);
    expect(cast('INT', 'TINYINT', -129)).toBe(127);
    expect(cast('SMALLINT', 'BIGINT', -7)).toBe(-7n);
  });
  it('floating to integer truncates toward zero, saturates at the int/long range, NaN → 0; byte/short go through int', () => {
    expect(cast('DOUBLE', 'INT', 3.9)).toBe(3);
    expect(cast('DOUBLE', 'INT', -3.9)).toBe(-3);
    expect(cast('DOUBLE', 'INT', NaN)).toBe(0);
    expect(cast('DOUBLE', 'INT', 1e20)).toBe(2147483647);
    expect(cast('DOUBLE', 'INT', -1e20)).toBe(-2147483648);
    expect(cast('DOUBLE', 'TINYINT', 300.7)).toBe(44);
    expect(cast('DOUBLE', 'TINYINT', 1e10)).toBe(-1); // (byte) Integer.MAX_VALUE
    expect(cast('FLOAT', 'SMALLINT', 70000.5)).toBe(4464);
    expect(cast('DOUBLE', 'BIGINT', 1e19)).toBe(9223372036854775807n);
    expect(cast('DOUBLE', 'BIGINT', -2.5)).toBe(-2n);
  });
  it('to FLOAT rounds once to nearest-even (also from a long past 2^53); to DOUBLE as Java', () => {
    expect(cast('DOUBLE', 'FLOAT', 0.1)).toBe(Math.fround(0.1));
    expect(cast('DOUBLE', 'FLOAT', 1e40)).toBe(Infinity);
    expect(cast('BIGINT', 'FLOAT', 16777217n)).toBe(16777216);
    // 2^60 + 2^36 + 1: a double rounding (long → double → float) would give 2^60, Java's one rounding 2^60 + 2^37.
    expect(cast('BIGINT', 'FLOAT', (1n << 60n) + (1n << 36n) + 1n)).toBe(2 ** 60 + 2 ** 37);
    expect(cast('BIGINT', 'DOUBLE', 9007199254740993n)).toBe(9007199254740992);
    expect(cast('FLOAT', 'DOUBLE', Math.fround(0.1))).toBe(0.10000000149011612);
  });
});

describe('DecimalToNumericPrimitiveCastRule: castToIntegral (RoundingMode.DOWN, then longValue) and doubleValue', () => {
  it('integers: fraction dropped toward zero, then the low 64 bits, then the narrower wrap', () => {
    expect(ruleOf('DECIMAL(10, 2)', 'INT')).toBe('DecimalToNumericPrimitiveCastRule');
    expect(cast('DECIMAL(10, 2)', 'INT', dec(12399n, 2))).toBe(123);
    expect(cast('DECIMAL(10, 2)', 'INT', dec(-12399n, 2))).toBe(-123);
    expect(cast('DECIMAL(38, 0)', 'BIGINT', dec((1n << 64n) + 7n, 0))).toBe(7n);
    expect(cast('DECIMAL(10, 0)', 'TINYINT', dec(1000n, 0))).toBe(-24);
  });
  it('floating: unscaled / 10^scale for a compact decimal, float from that double', () => {
    expect(cast('DECIMAL(10, 2)', 'DOUBLE', dec(10n, 2))).toBe(0.1);
    expect(cast('DECIMAL(10, 2)', 'FLOAT', dec(10n, 2))).toBe(Math.fround(0.1));
    expect(cast('DECIMAL(38, 20)', 'DOUBLE', dec(123456789012345678901234567890n, 20))).toBe(1234567890.1234567);
  });
});

describe('NumericPrimitiveToDecimalCastRule: BigDecimal.valueOf(long | double), HALF_UP, null past the precision', () => {
  it('integers', () => {
    expect(ruleOf('INT', 'DECIMAL(5, 2)')).toBe('NumericPrimitiveToDecimalCastRule');
    expect(cast('INT', 'DECIMAL(5, 2)', 12)).toEqual(dec(1200n, 2));
    expect(cast('INT', 'DECIMAL(4, 0)', 12345)).toBeNull();
    expect(cast('BIGINT', 'DECIMAL(20, 0)', -9223372036854775808n)).toEqual(dec(-9223372036854775808n, 0));
  });
  it('floating goes through Double.toString (1.005 → 1.01, 0.1f → 0.10000000149011612)', () => {
    expect(cast('DOUBLE', 'DECIMAL(5, 2)', 1.005)).toEqual(dec(101n, 2));
    expect(cast('FLOAT', 'DECIMAL(12, 10)', Math.fround(0.1))).toEqual(dec(1000000015n, 10));
    expect(cast('DOUBLE', 'DECIMAL(5, 2)', 1e-7)).toEqual(dec(0n, 2));
    expect(cast('DOUBLE', 'DECIMAL(5, 2)', -2.675)).toEqual(dec(-268n, 2));
    expect(cast('DOUBLE', 'DECIMAL(3, 0)', 999.5)).toBeNull();
    expect(() => cast('DOUBLE', 'DECIMAL(5, 2)', NaN)).toThrow(/NaN/);
  });
});

describe('DecimalToDecimalCastRule: Decimal.fromBigDecimal (HALF_UP to the scale, null past the precision)', () => {
  it('rounds half away from zero and overflows to null', () => {
    expect(ruleOf('DECIMAL(10, 2)', 'DECIMAL(5, 1)')).toBe('DecimalToDecimalCastRule');
    expect(cast('DECIMAL(10, 2)', 'DECIMAL(5, 1)', dec(12345n, 2))).toEqual(dec(1235n, 1));
    expect(cast('DECIMAL(10, 2)', 'DECIMAL(5, 1)', dec(-12345n, 2))).toEqual(dec(-1235n, 1));
    expect(cast('DECIMAL(10, 2)', 'DECIMAL(5, 1)', dec(12344n, 2))).toEqual(dec(1234n, 1));
    expect(cast('DECIMAL(10, 2)', 'DECIMAL(5, 1)', dec(1234567n, 2))).toBeNull();
    expect(cast('DECIMAL(10, 2)', 'DECIMAL(12, 4)', dec(-5n, 2))).toEqual(dec(-500n, 4));
  });
});

describe('BooleanToNumericCastRule and NumericToBooleanCastRule', () => {
  it('true → 1, false → 0 in every numeric type; DECIMAL through castFrom (may overflow to null)', () => {
    expect(ruleOf('BOOLEAN', 'TINYINT')).toBe('BooleanToNumericCastRule');
    expect(cast('BOOLEAN', 'TINYINT', true)).toBe(1);
    expect(cast('BOOLEAN', 'BIGINT', false)).toBe(0n);
    expect(cast('BOOLEAN', 'DOUBLE', true)).toBe(1);
    expect(cast('BOOLEAN', 'DECIMAL(3, 2)', true)).toEqual(dec(100n, 2));
    expect(cast('BOOLEAN', 'DECIMAL(1, 1)', true)).toBeNull();
  });
  it('integers: value != 0', () => {
    expect(ruleOf('INT', 'BOOLEAN')).toBe('NumericToBooleanCastRule');
    expect(cast('INT', 'BOOLEAN', 0)).toBe(false);
    expect(cast('INT', 'BOOLEAN', -5)).toBe(true);
    expect(cast('BIGINT', 'BOOLEAN', 0n)).toBe(false);
  });
});

describe('NumericToStringCastRule: toString() of the boxed value, then CHAR padding / VARCHAR cut', () => {
  it('DOUBLE and FLOAT print as Double.toString / Float.toString', () => {
    expect(ruleOf('DOUBLE', 'STRING')).toBe('NumericToStringCastRule');
    const d = (v: number): CastValue => cast('DOUBLE', 'STRING', v);
    expect([d(1e7), d(9999999), d(0.001), d(1e-4), d(123), d(-0), d(NaN), d(-Infinity), d(5e-324), d(2e23)]).toEqual([
      '1.0E7',
      '9999999.0',
      '0.001',
      '1.0E-4',
      '123.0',
      '-0.0',
      'NaN',
      '-Infinity',
      '4.9E-324',
      '2.0E23',
    ]);
    const f = (v: number): CastValue => cast('FLOAT', 'STRING', Math.fround(v));
    // JDK 19+ (shortest decimal; JDK 17 printed Float.MIN_NORMAL as 1.17549435E-38).
    expect([f(0.1), f(1e10), f(3.4028235e38), f(1.17549435e-38), f(16777217)]).toEqual([
      '0.1',
      '1.0E10',
      '3.4028235E38',
      '1.1754944E-38',
      '1.6777216E7',
    ]);
  });
  it('integers and decimals (toPlainString); CHAR(n) pads, VARCHAR(n) cuts', () => {
    expect(cast('DECIMAL(10, 2)', 'STRING', dec(-5n, 2))).toBe('-0.05');
    expect(cast('DECIMAL(10, 0)', 'STRING', dec(120n, 0))).toBe('120');
    expect(cast('INT', 'CHAR(5)', 42)).toBe('42   ');
    expect(cast('BIGINT', 'VARCHAR(3)', 1234567n)).toBe('123');
  });
});

describe('BooleanToStringCastRule', () => {
  it('"true" / "false" (lower case), padded or cut', () => {
    expect(ruleOf('BOOLEAN', 'STRING')).toBe('BooleanToStringCastRule');
    expect(cast('BOOLEAN', 'STRING', true)).toBe('true');
    expect(cast('BOOLEAN', 'CHAR(6)', false)).toBe('false ');
    expect(cast('BOOLEAN', 'VARCHAR(3)', false)).toBe('fal');
  });
});

describe('TimestampToStringCastRule: DateTimeUtils.formatTimestamp (trailing zeros dropped down to the precision)', () => {
  it('TIMESTAMP prints its wall clock', () => {
    expect(ruleOf('TIMESTAMP(3)', 'STRING')).toBe('TimestampToStringCastRule');
    const t = utc('2024-01-15T10:20:30');
    expect(cast('TIMESTAMP(3)', 'STRING', ts(t))).toBe('2024-01-15 10:20:30.000');
    expect(cast('TIMESTAMP(6)', 'STRING', ts(t + 123, 400_000))).toBe('2024-01-15 10:20:30.123400');
    expect(cast('TIMESTAMP(0)', 'STRING', ts(t))).toBe('2024-01-15 10:20:30');
    expect(cast('TIMESTAMP(9)', 'STRING', ts(t, 5))).toBe('2024-01-15 10:20:30.000000005');
    expect(cast('TIMESTAMP(3)', 'STRING', ts(-1))).toBe('1969-12-31 23:59:59.999');
    expect(cast('TIMESTAMP(3)', 'CHAR(10)', ts(t))).toBe('2024-01-15');
  });
  describe('TIMESTAMP_LTZ prints the local wall clock', () => {
    inZone('Asia/Shanghai');
    it('in the process time zone (Java: the JVM default)', () => {
      expect(cast('TIMESTAMP(3) WITH LOCAL TIME ZONE', 'STRING', ts(0))).toBe('1970-01-01 08:00:00.000');
    });
  });
});

describe('TimeToStringCastRule: DateTimeUtils.formatTimestampMillis', () => {
  it('HH:mm:ss, then millisecond digits up to the last non-zero one (at least one)', () => {
    expect(ruleOf('TIME(3)', 'STRING')).toBe('TimeToStringCastRule');
    expect(cast('TIME(3)', 'STRING', 45296789)).toBe('12:34:56.789');
    expect(cast('TIME(3)', 'STRING', 45296120)).toBe('12:34:56.12');
    expect(cast('TIME(3)', 'STRING', 45296000)).toBe('12:34:56.0');
    expect(cast('TIME(0)', 'STRING', 45296789)).toBe('12:34:56');
  });
});

describe('DateToStringCastRule: DateTimeUtils.formatDate', () => {
  it('yyyy-MM-dd, padded for CHAR', () => {
    expect(ruleOf('DATE', 'STRING')).toBe('DateToStringCastRule');
    expect(cast('DATE', 'STRING', 19737)).toBe('2024-01-15');
    expect(cast('DATE', 'STRING', -1)).toBe('1969-12-31');
    expect(cast('DATE', 'CHAR(12)', 19737)).toBe('2024-01-15  ');
  });
});

describe('StringToStringCastRule: BinaryStringUtils.toCharacterString (code points)', () => {
  it('cuts to n code points, pads CHAR with spaces', () => {
    expect(ruleOf('STRING', 'VARCHAR(5)')).toBe('StringToStringCastRule');
    expect(cast('STRING', 'VARCHAR(5)', 'héllo wörld')).toBe('héllo');
    expect(cast('STRING', 'VARCHAR(2)', '😀😀x')).toBe('😀😀');
    expect(cast('VARCHAR(10)', 'CHAR(4)', 'ab')).toBe('ab  ');
  });
});

describe('ArrayToStringCastRule, MapToStringCastRule, RowToStringCastRule', () => {
  it('[a, b], {k -> v}, {a, b} with each element cast to STRING and null as "null"', () => {
    expect(ruleOf('ARRAY<INT>', 'STRING')).toBe('ArrayToStringCastRule');
    expect(cast('ARRAY<INT>', 'STRING', [1, null, 3])).toBe('[1, null, 3]');
    expect(cast('ARRAY<DOUBLE>', 'STRING', [1, 1e7])).toBe('[1.0, 1.0E7]');
    expect(ruleOf('MAP<STRING, INT>', 'STRING')).toBe('MapToStringCastRule');
    expect(
      cast('MAP<STRING, INT>', 'STRING', [
        ['a', 1],
        ['b', null],
      ]),
    ).toBe('{a -> 1, b -> null}');
    expect(ruleOf('ROW<a INT, b STRING>', 'STRING')).toBe('RowToStringCastRule');
    expect(cast('ROW<a INT, b STRING, c DATE>', 'STRING', [1, 'x', 19737])).toBe('{1, x, 2024-01-15}');
  });
});

describe('StringToBooleanCastRule: BinaryStringUtils.toBoolean', () => {
  it('t/true/y/yes/1 and f/false/n/no/0 in any case; anything else fails', () => {
    expect(ruleOf('STRING', 'BOOLEAN')).toBe('StringToBooleanCastRule');
    expect(['TRUE', 'y', 'Yes', '1', 'No', '0', 'f'].map((s) => cast('STRING', 'BOOLEAN', s))).toEqual([
      true,
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
    expect(() => cast('STRING', 'BOOLEAN', 'maybe')).toThrow("Cannot parse 'maybe' as BOOLEAN.");
    expect(() => cast('STRING', 'BOOLEAN', ' true')).toThrow(/Cannot parse/);
  });
});

describe('StringToDecimalCastRule: new BigDecimal(text), then fromBigDecimal', () => {
  it('HALF_UP, exponent notation, null past the precision, an error for text BigDecimal refuses', () => {
    expect(ruleOf('STRING', 'DECIMAL(5, 2)')).toBe('StringToDecimalCastRule');
    expect(cast('STRING', 'DECIMAL(5, 2)', '12.345')).toEqual(dec(1235n, 2));
    expect(cast('STRING', 'DECIMAL(5, 2)', '-12.345')).toEqual(dec(-1235n, 2));
    expect(cast('STRING', 'DECIMAL(6, 2)', '1e3')).toEqual(dec(100000n, 2));
    expect(cast('STRING', 'DECIMAL(6, 2)', '1e5')).toBeNull();
    expect(() => cast('STRING', 'DECIMAL(6, 2)', ' 1')).toThrow(/not a valid BigDecimal/);
    expect(() => cast('STRING', 'DECIMAL(6, 2)', 'abc')).toThrow(/not a valid BigDecimal/);
  });
});

describe('StringToNumericPrimitiveCastRule: BinaryStringUtils.toByte/toShort/toInt/toLong, Float.parseFloat, Double.parseDouble', () => {
  it('integers: sign, digits and a dropped fraction; no spaces; overflow fails', () => {
    expect(ruleOf('STRING', 'INT')).toBe('StringToNumericPrimitiveCastRule');
    expect(['12.7', '-12.7', '+5', '1.', '.5', '007'].map((s) => cast('STRING', 'INT', s))).toEqual([12, -12, 5, 1, 0, 7]);
    expect(cast('STRING', 'BIGINT', '9223372036854775807')).toBe(9223372036854775807n);
    expect(() => cast('STRING', 'TINYINT', '128')).toThrow("For input string: '128'. Overflow.");
    expect(() => cast('STRING', 'INT', '2147483648')).toThrow(/Overflow/);
    expect(() => cast('STRING', 'INT', ' 12')).toThrow(/Invalid character found/);
    expect(() => cast('STRING', 'INT', '1e3')).toThrow(/Invalid character found/);
    expect(() => cast('STRING', 'INT', '')).toThrow(/Input is empty/);
  });
  it('floating: Java grammar (trimmed, f/d suffix, hex, NaN/Infinity), rounded straight to FLOAT', () => {
    expect([' 1.5 ', '1.5f', '0x1p3', '-Infinity', '.5e1'].map((s) => cast('STRING', 'DOUBLE', s))).toEqual([1.5, 1.5, 8, -Infinity, 5]);
    expect(cast('STRING', 'FLOAT', '3.4028235e38')).toBe(3.4028234663852886e38);
    expect(cast('STRING', 'FLOAT', '3.4028236e38')).toBe(Infinity);
    // The double nearest to this text lies exactly between two floats; Java rounds the text once.
    expect(cast('STRING', 'FLOAT', '1.00000005960464477539062499')).toBe(1);
    expect(() => cast('STRING', 'DOUBLE', '0x10')).toThrow(/For input string/);
    expect(() => cast('STRING', 'DOUBLE', 'infinity')).toThrow(/For input string/);
  });
});

describe('StringToDateCastRule: BinaryStringUtils.toDate', () => {
  it('y-m-d (text after a space ignored) or a day number; invalid dates fail', () => {
    expect(ruleOf('STRING', 'DATE')).toBe('StringToDateCastRule');
    // All digits is a day number (Integer.toString of a DATE), not a year.
    expect(['2024-01-15', '2024-1-5', '2024-01-15 10:00:00', '19737', '2024', '2024-03'].map((s) => cast('STRING', 'DATE', s))).toEqual([
      19737, 19727, 19737, 19737, 2024, 19783,
    ]);
    expect(() => cast('STRING', 'DATE', '2023-02-29')).toThrow("For input string: '2023-02-29'.");
    expect(() => cast('STRING', 'DATE', 'yesterday')).toThrow(/For input string/);
  });
});

describe('StringToTimeCastRule: BinaryStringUtils.toTime', () => {
  it('h[:m[:s[.fff]]], the 4th fraction digit rounds, no range check; or milliseconds', () => {
    expect(ruleOf('STRING', 'TIME(3)')).toBe('StringToTimeCastRule');
    expect(['12:34:56.789', '12:34', '12:34:56.7895', '25:00:00', '1000'].map((s) => cast('STRING', 'TIME(3)', s))).toEqual([
      45296789, 45240000, 45296790, 90000000, 1000,
    ]);
    expect(() => cast('STRING', 'TIME(3)', 'noon')).toThrow(/For input string/);
  });
});

describe('StringToTimestampCastRule: DateTimeUtils.parseTimestampData (pattern yyyy-[MM][M]-[dd][d][ HH:mm:ss[.n]])', () => {
  it('TIMESTAMP: text cut to the precision, SMART day clamping, epoch millis for digits; other shapes fail', () => {
    expect(ruleOf('STRING', 'TIMESTAMP(6)')).toBe('StringToTimestampCastRule');
    const t = utc('2024-01-15T10:20:30');
    expect(cast('STRING', 'TIMESTAMP(6)', '2024-01-15 10:20:30.123456789')).toEqual(ts(t + 123, 456_000));
    expect(cast('STRING', 'TIMESTAMP(3)', '2024-1-5')).toEqual(ts(utc('2024-01-05T00:00:00')));
    expect(cast('STRING', 'TIMESTAMP(3)', '2024-02-30')).toEqual(ts(utc('2024-02-29T00:00:00')));
    expect(cast('STRING', 'TIMESTAMP(3)', '2024-12-31 24:00:00')).toEqual(ts(utc('2025-01-01T00:00:00')));
    expect(cast('STRING', 'TIMESTAMP(3)', '1700000000123')).toEqual(ts(1700000000123));
    expect(cast('STRING', 'TIMESTAMP(0)', '1700000000123')).toEqual(ts(1700000000000));
    for (const bad of ['2024-01-15T10:20:30', '2024-01-15 10:20', '2024-01-15 10:20:30Z', '24-01-15', '2024-13-01']) {
      expect(() => cast('STRING', 'TIMESTAMP(3)', bad)).toThrow(/could not be parsed/);
    }
  });
  describe('TIMESTAMP_LTZ: the wall clock in the local time zone', () => {
    inZone('Asia/Shanghai');
    it('is an instant eight hours earlier in Asia/Shanghai', () => {
      expect(cast('STRING', 'TIMESTAMP(3) WITH LOCAL TIME ZONE', '2024-01-15 08:00:00')).toEqual(ts(utc('2024-01-15T00:00:00')));
    });
  });
});

describe('StringToBinaryCastRule and BinaryToBinaryCastRule: BinaryStringUtils.toBinaryString', () => {
  it('UTF-8 bytes; BINARY(n) zero-padded or cut, VARBINARY(n) cut', () => {
    expect(ruleOf('STRING', 'BYTES')).toBe('StringToBinaryCastRule');
    expect(cast('STRING', 'VARBINARY(3)', 'héllo')).toEqual(new Uint8Array([0x68, 0xc3, 0xa9]));
    expect(cast('STRING', 'BINARY(4)', 'ab')).toEqual(new Uint8Array([0x61, 0x62, 0, 0]));
    expect(ruleOf('BYTES', 'BINARY(5)')).toBe('BinaryToBinaryCastRule');
    expect(cast('BYTES', 'BINARY(5)', new Uint8Array([1, 2, 3]))).toEqual(new Uint8Array([1, 2, 3, 0, 0]));
    expect(cast('BYTES', 'VARBINARY(2)', new Uint8Array([1, 2, 3]))).toEqual(new Uint8Array([1, 2]));
  });
});

describe('BinaryToStringCastRule: BinaryString.fromBytes', () => {
  it('the bytes as UTF-8 text, never cut or padded', () => {
    expect(ruleOf('BYTES', 'VARCHAR(2)')).toBe('BinaryToStringCastRule');
    expect(cast('BYTES', 'VARCHAR(2)', new TextEncoder().encode('héllo'))).toBe('héllo');
  });
});

describe('TimestampToTimestampCastRule: zone conversion, then DateTimeUtils.truncate when the precision shrinks', () => {
  it('truncates (toward zero on the epoch millis below millisecond precision)', () => {
    expect(ruleOf('TIMESTAMP(6)', 'TIMESTAMP(3)')).toBe('TimestampToTimestampCastRule');
    const t = utc('2024-01-15T10:20:30');
    expect(cast('TIMESTAMP(6)', 'TIMESTAMP(3)', ts(t + 123, 456_000))).toEqual(ts(t + 123));
    expect(cast('TIMESTAMP(3)', 'TIMESTAMP(0)', ts(-1500))).toEqual(ts(-1000));
    expect(cast('TIMESTAMP(9)', 'TIMESTAMP(7)', ts(t + 123, 456_789))).toEqual(ts(t + 123, 456_700));
    // Java keeps a nano-of-second with no more digits than the precision as it is.
    expect(cast('TIMESTAMP(9)', 'TIMESTAMP(7)', ts(t, 5))).toEqual(ts(t, 5));
  });
  describe('between TIMESTAMP and TIMESTAMP_LTZ', () => {
    inZone('Asia/Shanghai');
    it('the wall clock and the instant differ by the local offset', () => {
      const wall = utc('2024-01-15T08:00:00');
      const instant = utc('2024-01-15T00:00:00');
      expect(cast('TIMESTAMP(3)', 'TIMESTAMP(3) WITH LOCAL TIME ZONE', ts(wall))).toEqual(ts(instant));
      expect(cast('TIMESTAMP(3) WITH LOCAL TIME ZONE', 'TIMESTAMP(3)', ts(instant))).toEqual(ts(wall));
    });
  });
});

describe('TimestampToDateCastRule and TimestampToTimeCastRule', () => {
  it('TIMESTAMP: (int) (millis / 86400000) and (int) (millis % 86400000), both toward zero', () => {
    expect(ruleOf('TIMESTAMP(3)', 'DATE')).toBe('TimestampToDateCastRule');
    expect(cast('TIMESTAMP(3)', 'DATE', ts(utc('2024-01-15T23:59:59.999')))).toBe(19737);
    expect(cast('TIMESTAMP(3)', 'DATE', ts(-43200000))).toBe(0); // 1969-12-31 12:00 → 1970-01-01 in Java
    expect(ruleOf('TIMESTAMP(3)', 'TIME(3)')).toBe('TimestampToTimeCastRule');
    expect(cast('TIMESTAMP(3)', 'TIME(3)', ts(utc('2024-01-15T10:20:30.123')))).toBe(37230123);
    expect(cast('TIMESTAMP(3)', 'TIME(3)', ts(-43200000))).toBe(-43200000);
  });
  describe('TIMESTAMP_LTZ: date and time of the local wall clock', () => {
    inZone('Asia/Shanghai');
    it('in Asia/Shanghai', () => {
      expect(cast('TIMESTAMP(3) WITH LOCAL TIME ZONE', 'DATE', ts(utc('2024-01-15T20:00:00')))).toBe(19738);
      expect(cast('TIMESTAMP(3) WITH LOCAL TIME ZONE', 'TIME(3)', ts(0))).toBe(28800000);
    });
  });
});

describe('DateToTimestampCastRule and TimeToTimestampCastRule', () => {
  it('TIMESTAMP: midnight of the day; the time on 1970-01-01', () => {
    expect(ruleOf('DATE', 'TIMESTAMP(3)')).toBe('DateToTimestampCastRule');
    expect(cast('DATE', 'TIMESTAMP(3)', 19737)).toEqual(ts(utc('2024-01-15T00:00:00')));
    expect(ruleOf('TIME(3)', 'TIMESTAMP(3)')).toBe('TimeToTimestampCastRule');
    expect(cast('TIME(3)', 'TIMESTAMP(3)', 37230123)).toEqual(ts(37230123));
  });
  describe('TIMESTAMP_LTZ', () => {
    inZone('Asia/Shanghai');
    it('local midnight as an instant; a time stays the same instant', () => {
      expect(cast('DATE', 'TIMESTAMP(3) WITH LOCAL TIME ZONE', 19737)).toEqual(ts(utc('2024-01-14T16:00:00')));
      expect(cast('TIME(3)', 'TIMESTAMP(3) WITH LOCAL TIME ZONE', 37230123)).toEqual(ts(37230123));
    });
  });
});

describe('TimestampToNumericPrimitiveCastRule and NumericPrimitiveToTimestamp: epoch seconds', () => {
  it('seconds toward zero (INT wraps); seconds × 1000 from INT and BIGINT only', () => {
    expect(ruleOf('TIMESTAMP(3)', 'BIGINT')).toBe('TimestampToNumericPrimitiveCastRule');
    expect(cast('TIMESTAMP(3)', 'BIGINT', ts(utc('2024-01-15T10:20:30.999')))).toBe(1705314030n);
    expect(cast('TIMESTAMP(3)', 'BIGINT', ts(-1500))).toBe(-1n);
    expect(cast('TIMESTAMP(3)', 'INT', ts(utc('2024-01-15T10:20:30.999')))).toBe(1705314030);
    expect(ruleOf('INT', 'TIMESTAMP(3)')).toBe('NumericPrimitiveToTimestamp');
    expect(cast('INT', 'TIMESTAMP(3)', 1705314030)).toEqual(ts(1705314030000));
    expect(cast('BIGINT', 'TIMESTAMP(3)', -1n)).toEqual(ts(-1000));
    expect(ruleOf('SMALLINT', 'TIMESTAMP(3)')).toBeUndefined();
  });
  describe('to TIMESTAMP_LTZ', () => {
    inZone('Asia/Shanghai');
    it('Java stores the local wall clock of the instant', () => {
      expect(cast('INT', 'TIMESTAMP(3) WITH LOCAL TIME ZONE', 0)).toEqual(ts(28800000));
    });
  });
});
