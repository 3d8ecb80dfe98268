import { describe, expect, it } from 'vitest';
import { JsonNumber, javaDoubleToString, javaFloatToString, parseJson, stringifyJackson } from '../src/json.js';
import { FormatError } from '../src/errors.js';

describe('parseJson', () => {
  it('keeps integers beyond 2^53 as bigint and small ones as number', () => {
    const v = parseJson('{"a": 9223372036854775807, "b": -9223372036854775808, "c": 9007199254740991, "d": 1.5, "e": -3}');
    expect(v).toEqual({ a: 9223372036854775807n, b: -9223372036854775808n, c: 9007199254740991, d: 1.5, e: -3 });
  });

  it('parses strings with escapes, nested arrays and literals', () => {
    expect(parseJson('[ "a\\"b\\\\c\\u00e9\\n", true, false, null, [ ], { } ]')).toEqual(['a"b\\cé\n', true, false, null, [], {}]);
  });

  it('returns exact decimal text when asked', () => {
    const v = parseJson('{"t": 4.000000000}', { exactDecimals: true }) as { t: JsonNumber };
    expect(v.t).toBeInstanceOf(JsonNumber);
    expect(v.t.text).toBe('4.000000000');
  });

  it('rejects malformed input with FormatError', () => {
    for (const bad of ['{', '{"a" 1}', '[1,]', '01', '"x', '{"a":1} x', 'nul']) {
      expect(() => parseJson(bad), bad).toThrow(FormatError);
    }
  });

  it('treats __proto__ as an ordinary member', () => {
    const v = parseJson('{"__proto__": "x"}') as Record<string, unknown>;
    expect(Object.keys(v)).toEqual(['__proto__']);
  });
});

describe('stringifyJackson', () => {
  it('prints objects, empty containers and arrays like Jackson DefaultPrettyPrinter', () => {
    const text = stringifyJackson({
      a: 1,
      list: [{ x: 1 }, { y: [] }],
      strs: ['k0', 'k1'],
      empty: {},
      none: [],
      skipped: undefined,
      n: null,
    });
    expect(text).toBe(
      [
        '{',
        '  "a" : 1,',
        '  "list" : [ {',
        '    "x" : 1',
        '  }, {',
        '    "y" : [ ]',
        '  } ],',
        '  "strs" : [ "k0", "k1" ],',
        '  "empty" : { },',
        '  "none" : [ ],',
        '  "n" : null',
        '}',
      ].join('\n'),
    );
  });

  it('round-trips Long.MAX commitIdentifier exactly', () => {
    const text = '{\n  "commitIdentifier" : 9223372036854775807\n}';
    expect(stringifyJackson(parseJson(text))).toBe(text);
  });

  it('escapes like Jackson: short escapes, uppercase \\u00XX, no escaping of / or non-ASCII', () => {
    expect(stringifyJackson('a"\\/\n\t\u0001\u001fé')).toBe('"a\\"\\\\/\\n\\t\\u0001\\u001Fé"');
  });

  it('prints doubles like Java Double.toString', () => {
    // Integral numbers are longs in JSON (Java writes ints/longs without a fraction).
    expect(stringifyJackson([1.5, 1e10, 0.0001, -0.5, 1.23e-5])).toBe('[ 1.5, 10000000000, 1.0E-4, -0.5, 1.23E-5 ]');
  });
});

describe('Java floating point toString', () => {
  it('formats doubles', () => {
    expect(javaDoubleToString(1)).toBe('1.0');
    expect(javaDoubleToString(1e10)).toBe('1.0E10');
    expect(javaDoubleToString(1234567.5)).toBe('1234567.5');
    expect(javaDoubleToString(12345678)).toBe('1.2345678E7');
    expect(javaDoubleToString(0.001)).toBe('0.001');
    expect(javaDoubleToString(0.00012)).toBe('1.2E-4');
    expect(javaDoubleToString(-0)).toBe('-0.0');
    expect(javaDoubleToString(100)).toBe('100.0');
    expect(javaDoubleToString(0.1 + 0.2)).toBe('0.30000000000000004');
    expect(javaDoubleToString(NaN)).toBe('NaN');
    expect(javaDoubleToString(-Infinity)).toBe('-Infinity');
  });

  it('formats floats with float32 shortest digits', () => {
    expect(javaFloatToString(0.1)).toBe('0.1');
    expect(javaFloatToString(1.1)).toBe('1.1');
    expect(javaFloatToString(3.4028234663852886e38)).toBe('3.4028235E38');
    expect(javaFloatToString(1e10)).toBe('1.0E10');
  });
});
