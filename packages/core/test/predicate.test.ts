import { describe, expect, it } from 'vitest';
import type { DataField, DataType } from '@tidemark/format';
import { parsePredicate } from '../src/predicate-parser.js';
import {
  bindPredicate,
  compareStrings,
  evaluate,
  matches,
  mightMatch,
  partitionOnly,
  predicateColumns,
  statsFromRows,
  type ColumnStats,
  type Predicate,
} from '../src/predicate.js';
import { PredicateError } from '../src/errors.js';

const t = (root: string, extra: Record<string, unknown> = {}): DataType => ({ root, nullable: true, ...extra }) as DataType;
let nextId = 0;
const f = (name: string, type: DataType): DataField => ({ id: nextId++, name, type });

const fields: DataField[] = [
  f('i', t('INT')),
  f('ti', t('TINYINT')),
  f('big', t('BIGINT')),
  f('d', t('DOUBLE')),
  f('fl', t('FLOAT')),
  f('dec', t('DECIMAL', { precision: 10, scale: 2 })),
  f('s', t('VARCHAR', { length: 2147483647 })),
  f('b', t('BOOLEAN')),
  f('dt', t('DATE')),
  f('ts', t('TIMESTAMP', { precision: 9 })),
  f('tm', t('TIME', { precision: 3 })),
  f('bin', t('VARBINARY', { length: 2147483647 })),
  f('arr', t('ARRAY', { element: t('INT') })),
  f('Mixed Case', t('INT')),
  f('part', t('VARCHAR', { length: 10 })),
];

const p = (text: string): Predicate => parsePredicate(text, fields);

describe('parsePredicate', () => {
  it('parses comparisons and converts literals to the column type', () => {
    expect(p('i = 1')).toMatchObject({ kind: 'compare', op: '=', column: 'i', value: 1 });
    expect(p('big >= 9007199254740993')).toMatchObject({ op: '>=', value: 9007199254740993n });
    expect(p('big < -9223372036854775808')).toMatchObject({ value: -9223372036854775808n });
    expect(p('dec = 12.5')).toMatchObject({ value: { unscaled: 1250n, scale: 2 } });
    expect(p('dec = -0.07')).toMatchObject({ value: { unscaled: -7n, scale: 2 } });
    expect(p('dec > 3')).toMatchObject({ value: { unscaled: 300n, scale: 2 } });
    expect(p('dec > 1.2300')).toMatchObject({ value: { unscaled: 123n, scale: 2 } });
    expect(p('dec > 1.005')).toMatchObject({ value: { unscaled: 1005n, scale: 3 } });
    expect(p("s = 'it''s'")).toMatchObject({ value: "it's" });
    expect(p('b = TRUE')).toMatchObject({ value: true });
    expect(p("dt = DATE '2024-01-01'")).toMatchObject({ value: 19723 });
    expect(p("dt < '1969-12-31'")).toMatchObject({ value: -1 });
    expect(p("ts = TIMESTAMP '2024-01-01 10:00:00.123456789'")).toMatchObject({
      value: { millis: Date.UTC(2024, 0, 1, 10, 0, 0, 123), nanoOfMillis: 456789 },
    });
    expect(p("ts >= TIMESTAMP '1969-12-31 23:59:59.5'")).toMatchObject({ value: { millis: -500, nanoOfMillis: 0 } });
    expect(p("tm < TIME '10:00:01.5'")).toMatchObject({ value: 36_001_500 });
    expect(p("bin = X'00ff'")).toMatchObject({ value: new Uint8Array([0, 255]) });
    expect(p('d > 1.5e3')).toMatchObject({ value: 1500 });
    expect(p('fl = 0.1')).toMatchObject({ value: Math.fround(0.1) });
  });

  it('handles operators, keywords, precedence and parentheses', () => {
    expect(p('i <> 1')).toMatchObject({ op: '!=' });
    expect(p('i != 1')).toMatchObject({ op: '!=' });
    expect(p('5 < i')).toMatchObject({ op: '>', column: 'i', value: 5 });
    expect(p('i in (1, 2, NULL)')).toMatchObject({ kind: 'in', values: [1, 2, null], negated: false });
    expect(p('i NOT IN (1)')).toMatchObject({ kind: 'in', negated: true });
    expect(p('s is not null')).toMatchObject({ kind: 'isNull', negated: true });
    expect(p('arr IS NULL')).toMatchObject({ kind: 'isNull', column: 'arr' });
    const q = p("i = 1 OR i = 2 AND s = 'x'");
    expect(q.kind).toBe('or');
    const r = p("(i = 1 OR i = 2) AND NOT s = 'x'");
    expect(r.kind).toBe('and');
    expect(r.kind === 'and' && r.children[1]!.kind).toBe('not');
    expect(p('"Mixed Case" = 3')).toMatchObject({ column: 'Mixed Case' });
    expect(p('I = 3')).toMatchObject({ column: 'i' });
    expect(p('b')).toMatchObject({ kind: 'compare', column: 'b', value: true });
    expect(p('i BETWEEN 1 AND 5').kind).toBe('and');
    expect(p('i = NULL')).toMatchObject({ kind: 'compare', value: null });
  });

  it.each([
    ['nope = 1', /unknown column 'nope'.*columns are: i, ti/],
    ["i = 'x'", /column 'i' of type INT/],
    ['i = 1.5', /column 'i' of type INT.*integer/],
    ['ti = 300', /column 'ti' of type TINYINT.*out of range/],
    ['big = 9223372036854775808', /column 'big'.*BIGINT range/],
    ['s = 1', /column 's' of type STRING/],
    ["dt = DATE '2024-02-30'", /column 'dt'/],
    ["ts = TIMESTAMP 'noon'", /column 'ts'/],
    ['b = 1', /column 'b' of type BOOLEAN/],
    ['arr = 1', /column 'arr' of type ARRAY can only be tested with IS/],
    ['i = s', /two columns/],
    ['1 = 1', /needs a column/],
    ['i = 1 AND', /expected a literal|found end of input/],
    ['(i = 1', /expected '\)'/],
    ['i = 1 i = 2', /expected AND, OR/],
    ["s = 'open", /unterminated string/],
    ['i ~ 1', /unexpected character '~'/],
    ['i', /after column 'i'/],
    ['', /empty predicate/],
  ])('rejects %j', (text, message) => {
    let err: unknown;
    try {
      p(text);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PredicateError);
    expect((err as PredicateError).userError).toBe(true);
    expect((err as Error).message).toMatch(message);
  });
});

describe('evaluate (three-valued)', () => {
  const row = {
    i: 5,
    big: 10n ** 18n,
    dec: { unscaled: 1999n, scale: 2 },
    s: 'hello',
    b: false,
    dt: 19723,
    ts: { millis: 1000, nanoOfMillis: 500 },
    bin: new Uint8Array([1, 2]),
    d: null,
  };

  it('compares typed values', () => {
    expect(evaluate(p('i = 5'), row)).toBe(true);
    expect(evaluate(p('i > 5'), row)).toBe(false);
    expect(evaluate(p('big = 1000000000000000000'), row)).toBe(true);
    expect(evaluate(p('big > 999999999999999999'), row)).toBe(true);
    expect(evaluate(p('dec = 19.99'), row)).toBe(true);
    expect(evaluate(p('dec < 19.991'), row)).toBe(true);
    expect(evaluate(p('dec > 19.989'), row)).toBe(true);
    expect(evaluate(p('dec = 19.991'), row)).toBe(false);
    expect(evaluate(p("s > 'hell'"), row)).toBe(true);
    expect(evaluate(p("s IN ('a', 'hello')"), row)).toBe(true);
    expect(evaluate(p('b = FALSE'), row)).toBe(true);
    expect(evaluate(p('b'), row)).toBe(false);
    expect(evaluate(p("dt = DATE '2024-01-01'"), row)).toBe(true);
    expect(evaluate(p("ts > TIMESTAMP '1970-01-01 00:00:01.0000005'"), row)).toBe(false);
    expect(evaluate(p("ts > TIMESTAMP '1970-01-01 00:00:01.0000004'"), row)).toBe(true);
    expect(evaluate(p("bin = X'0102'"), row)).toBe(true);
    expect(evaluate(p("bin < X'0103'"), row)).toBe(true);
  });

  it('follows SQL NULL semantics', () => {
    expect(evaluate(p('d = 1'), row)).toBeNull();
    expect(evaluate(p('NOT d = 1'), row)).toBeNull();
    expect(evaluate(p('d IS NULL'), row)).toBe(true);
    expect(evaluate(p('d IS NOT NULL'), row)).toBe(false);
    expect(evaluate(p('d = 1 AND i = 6'), row)).toBe(false);
    expect(evaluate(p('d = 1 AND i = 5'), row)).toBeNull();
    expect(evaluate(p('d = 1 OR i = 5'), row)).toBe(true);
    expect(evaluate(p('d = 1 OR i = 6'), row)).toBeNull();
    expect(evaluate(p('i = NULL'), row)).toBeNull();
    expect(evaluate(p('i IN (1, NULL)'), row)).toBeNull();
    expect(evaluate(p('i IN (5, NULL)'), row)).toBe(true);
    expect(evaluate(p('i NOT IN (1, NULL)'), row)).toBeNull();
    expect(evaluate(p('i NOT IN (1, 2)'), row)).toBe(true);
    expect(evaluate(p('i NOT BETWEEN 1 AND 4'), row)).toBe(true);
    expect(matches(p('d = 1 OR i = 6'), row)).toBe(false);
    // a missing key reads as NULL
    expect(evaluate(p('ti IS NULL'), row)).toBe(true);
  });

  it('orders strings by code point like Paimon (UTF-8 bytes), not by UTF-16 unit', () => {
    const emoji = '\u{1F600}'; // surrogate pair, code point > U+FFFF
    const cjkCompat = '\uFF21'; // U+FF21 > U+D83D but < U+1F600
    expect(compareStrings(emoji, cjkCompat)).toBeGreaterThan(0);
    expect(evaluate(p(`s > '${cjkCompat}'`), { s: emoji })).toBe(true);
    expect(compareStrings('ab', 'abc')).toBeLessThan(0);
  });

  it('bindPredicate evaluates array rows', () => {
    const names = ['i', 's', 'd'];
    const fn = bindPredicate(p("i > 1 AND s = 'x'"), names);
    expect(fn([2, 'x', null])).toBe(true);
    expect(fn([2, null, null])).toBe(false);
    expect(() => bindPredicate(p('big = 1'), names)).toThrow(/'big'/);
  });
});

describe('mightMatch (stats pruning)', () => {
  const stats = (cols: Record<string, ColumnStats>, rowCount: number | null = 100) => ({ rowCount, columns: cols });
  const iStats = { min: 10, max: 20, nullCount: 0 };

  it('prunes by min/max for comparisons', () => {
    const cases: Array<[string, boolean]> = [
      ['i = 5', false],
      ['i = 10', true],
      ['i = 21', false],
      ['i < 10', false],
      ['i <= 10', true],
      ['i > 20', false],
      ['i >= 20', true],
      ['i != 15', true],
      ['i IN (1, 2, 30)', false],
      ['i IN (1, 15)', true],
      ['i NOT IN (1, 2)', true],
      ['i IS NULL', false],
      ['i IS NOT NULL', true],
      ['i > 25 OR i < 5', false],
      ['i > 25 OR i < 11', true],
      ['i > 12 AND i < 11', true], // independent conjuncts: conservative
      ['NOT i > 5', false],
      ['NOT i > 15', true],
      ['i = NULL', false],
    ];
    for (const [text, expected] of cases) expect([text, mightMatch(p(text), stats({ i: iStats }))]).toEqual([text, expected]);
  });

  it('handles a single-valued column for != and NOT IN', () => {
    const one = stats({ i: { min: 7, max: 7, nullCount: 0 } });
    expect(mightMatch(p('i != 7'), one)).toBe(false);
    expect(mightMatch(p('i NOT IN (7, 8)'), one)).toBe(false);
    expect(mightMatch(p('NOT i = 7'), one)).toBe(false);
    expect(mightMatch(p('i != 8'), one)).toBe(true);
  });

  it('uses null counts', () => {
    const allNull = stats({ i: { min: null, max: null, nullCount: 100 } });
    expect(mightMatch(p('i = 1'), allNull)).toBe(false);
    expect(mightMatch(p('i IS NULL'), allNull)).toBe(true);
    expect(mightMatch(p('i IS NOT NULL'), allNull)).toBe(false);
    expect(mightMatch(p('NOT i = 1'), allNull)).toBe(false);
    const someNull = stats({ i: { ...iStats, nullCount: 3 } });
    expect(mightMatch(p('i IS NULL'), someNull)).toBe(true);
    expect(mightMatch(p('i NOT IN (1, NULL)'), someNull)).toBe(false);
    expect(mightMatch(p('NOT (i IN (15, NULL))'), someNull)).toBe(false);
  });

  it('is conservative when stats are missing', () => {
    expect(mightMatch(p('i = 5'), stats({}))).toBe(true);
    expect(mightMatch(p('i = 5'), stats({ i: { nullCount: 0 } }))).toBe(true);
    expect(mightMatch(p('i IS NULL'), stats({ i: { min: 1, max: 2 } }))).toBe(true);
    expect(mightMatch(p('i IS NOT NULL'), stats({ i: { min: null, max: null, nullCount: 5 } }, null))).toBe(true);
    expect(mightMatch(p('i = 5'), { columns: () => undefined })).toBe(true);
    // stats of an unexpected representation never prune
    expect(mightMatch(p('i = 5'), stats({ i: { min: 'a', max: 'b', nullCount: 0 } }))).toBe(true);
  });

  it('prunes an empty set of rows', () => {
    expect(mightMatch(p('i IS NULL'), stats({}, 0))).toBe(false);
  });

  it('works with typed stats (strings, decimals, timestamps, bigint)', () => {
    const st = stats({
      s: { min: 'apple', max: 'banana', nullCount: 0 },
      dec: { min: { unscaled: 100n, scale: 2 }, max: { unscaled: 500n, scale: 2 }, nullCount: 0 },
      ts: { min: { millis: 0, nanoOfMillis: 0 }, max: { millis: 1000, nanoOfMillis: 10 }, nullCount: 0 },
      big: { min: 1n, max: 2n, nullCount: 0n },
    });
    expect(mightMatch(p("s = 'cherry'"), st)).toBe(false);
    expect(mightMatch(p("s = 'avocado'"), st)).toBe(true);
    expect(mightMatch(p('dec > 5.00'), st)).toBe(false);
    expect(mightMatch(p('dec > 4.999'), st)).toBe(true);
    expect(mightMatch(p("ts > TIMESTAMP '1970-01-01 00:00:01.00000001'"), st)).toBe(false);
    expect(mightMatch(p("ts >= TIMESTAMP '1970-01-01 00:00:01.00000001'"), st)).toBe(true);
    expect(mightMatch(p('big = 3'), st)).toBe(false);
  });

  it('never prunes a set containing a matching row (randomised)', () => {
    let seed = 42;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const preds = [
      'i = 3',
      'i < 3',
      'i >= 7',
      'i != 5',
      'i IN (1, 9)',
      'i NOT IN (2, 3)',
      'i IS NULL',
      'NOT (i > 4 OR i IS NULL)',
      'i BETWEEN 3 AND 4',
      'NOT i IN (4, NULL)',
    ].map(p);
    for (let trial = 0; trial < 400; trial++) {
      const values = Array.from({ length: 1 + rnd(4) }, () => (rnd(5) === 0 ? null : rnd(10)));
      const nonNull = values.filter((v): v is number => v !== null);
      const st = stats(
        {
          i: {
            min: nonNull.length ? Math.min(...nonNull) : null,
            max: nonNull.length ? Math.max(...nonNull) : null,
            nullCount: values.length - nonNull.length,
          },
        },
        values.length,
      );
      for (const pred of preds) {
        const anyMatch = values.some((v) => evaluate(pred, { i: v }) === true);
        if (anyMatch) expect(mightMatch(pred, st)).toBe(true);
      }
    }
  });
});

describe('partitionOnly', () => {
  it('keeps only the conjuncts on partition columns', () => {
    const pred = p("part = 'a' AND i > 3 AND (part = 'b' OR part IS NULL) AND (part = 'c' OR i = 1)");
    const q = partitionOnly(pred, ['part'])!;
    expect([...predicateColumns(q)]).toEqual(['part']);
    expect(evaluate(q, { part: 'a' })).toBe(false); // a AND (b OR null) → false
    expect(q.kind).toBe('and');
    expect(q.kind === 'and' && q.children.length).toBe(2);
    expect(partitionOnly(p("i = 1 OR part = 'a'"), ['part'])).toBeNull();
    expect(partitionOnly(p("part = 'x'"), ['part'])).toMatchObject({ kind: 'compare', column: 'part' });
  });
});

describe('statsFromRows', () => {
  it('maps positional stats rows to columns', () => {
    const st = statsFromRows(['i', 's'], [10, 'b'], [20, 'd'], [0, 2], 5);
    expect(mightMatch(p('i = 25'), st)).toBe(false);
    expect(mightMatch(p("s = 'c'"), st)).toBe(true);
    expect(mightMatch(p("s = 'e'"), st)).toBe(false);
    expect(mightMatch(p('big = 1'), st)).toBe(true); // column without stats
    expect(mightMatch(p('i = 25'), statsFromRows(['i'], null, null, null, null))).toBe(true);
  });

  it('does not read inherited object properties as columns', () => {
    const fld: DataField[] = [{ id: 0, name: 'constructor', type: t('INT') }];
    expect(evaluate(parsePredicate('"constructor" IS NULL', fld), {})).toBe(true);
  });
});
