/**
 * `LIKE` in the WHERE language: `%` any run of characters, `_` one character, backslash (or the
 * ESCAPE character) for a literal wildcard, case-sensitive, SQL three-valued for NULL; pruning by
 * the pattern's literal prefix, never wrongly.
 */
import { describe, expect, it } from 'vitest';
import type { DataField, DataType } from '@tidemark/format';
import { parsePredicate } from '../src/predicate-parser.js';
import { evaluate, mightMatch, predicateColumns, type Predicate } from '../src/predicate.js';
import { PredicateError } from '../src/errors.js';

const t = (root: string): DataType => ({ root, nullable: true, length: 100 }) as DataType;
const fields: DataField[] = [
  { id: 0, name: 's', type: t('VARCHAR') },
  { id: 1, name: 'c', type: { root: 'CHAR', nullable: true, length: 3 } as DataType },
  { id: 2, name: 'i', type: t('INT') },
];
const p = (text: string): Predicate => parsePredicate(text, fields);
const on = (text: string, s: string | null): boolean | null => evaluate(p(text), { s });

describe('LIKE', () => {
  it('parses [NOT] LIKE with an optional ESCAPE and names its column', () => {
    expect(p("s LIKE 'a%'")).toMatchObject({ kind: 'like', column: 's', pattern: 'a%', negated: false });
    expect(p("s not like '%x' ESCAPE '!'")).toMatchObject({ kind: 'like', negated: true, escape: '!' });
    expect([...predicateColumns(p("s LIKE 'a' AND i = 1"))].sort()).toEqual(['i', 's']);
  });

  it('matches % and _ over whole characters, case-sensitively', () => {
    const cases: Array<[string, string, boolean]> = [
      ['paid', 'paid', true],
      ['pa%', 'paid', true],
      ['%id', 'paid', true],
      ['%', '', true],
      ['_', '', false],
      ['p_id', 'paid', true],
      ['p_d', 'paid', false],
      ['PA%', 'paid', false],
      ['%a%i%', 'paid', true],
      ['a.c', 'abc', false],
      ['a[b]*', 'a[b]*', true],
      ['_', '😀', true],
      ['x%', 'x\ny', true],
      ['100\\%', '100%', true],
      ['100\\%', '1000', false],
      ['a\\_c', 'abc', false],
      ['a\\_c', 'a_c', true],
    ];
    for (const [pattern, value, expected] of cases)
      expect([pattern, value, on(`s LIKE '${pattern}'`, value)]).toEqual([pattern, value, expected]);
    expect(on("s LIKE '100!%' ESCAPE '!'", '100%')).toBe(true);
    expect(on("s NOT LIKE 'pa%'", 'paid')).toBe(false);
    expect(on("s NOT LIKE 'pa%'", 'open')).toBe(true);
  });

  it('is UNKNOWN on NULL, so neither LIKE nor NOT LIKE keeps the row', () => {
    expect(on("s LIKE '%'", null)).toBeNull();
    expect(on("s NOT LIKE 'x'", null)).toBeNull();
  });

  it('refuses a non-string column, a non-string pattern and a bad escape, naming them', () => {
    expect(() => p("i LIKE '1%'")).toThrow(PredicateError);
    expect(() => p("i LIKE '1%'")).toThrow(/LIKE needs a CHAR or VARCHAR column, but 'i' is INT/);
    expect(() => p('s LIKE 1')).toThrow(/LIKE needs a 'string' pattern/);
    expect(() => p("s LIKE 'a' ESCAPE 'xy'")).toThrow(/ESCAPE takes one character/);
    expect(() => p("s LIKE 'a\\'")).toThrow(/ends with the escape character/);
  });

  it('prunes by the literal prefix only where no row can match', () => {
    const stats = (min: string, max: string) => ({ rowCount: 10, columns: { s: { min, max, nullCount: 0 } } });
    expect(mightMatch(p("s LIKE 'pa%'"), stats('open', 'paid'))).toBe(true);
    expect(mightMatch(p("s LIKE 'pa%'"), stats('pay', 'zz'))).toBe(true);
    expect(mightMatch(p("s LIKE 'pa%'"), stats('a', 'open'))).toBe(false);
    expect(mightMatch(p("s LIKE 'pa%'"), stats('pb', 'zz'))).toBe(false);
    expect(mightMatch(p("s LIKE '%pa'"), stats('a', 'b'))).toBe(true); // no prefix: no pruning
    expect(mightMatch(p("s NOT LIKE 'pa%'"), stats('pa', 'pa'))).toBe(true); // never prunes
    expect(mightMatch(p("s LIKE 'x%'"), { rowCount: 10, columns: { s: { nullCount: 10 } } })).toBe(false);
  });
});
