/**
 * `partition.timestamp-formatter` patterns that Java accepts but the supported subset does not
 * (text fields such as the day of the week) are refused naming the letter, not as "too many
 * pattern letters", which sent users looking for a typo.
 */
import { describe, expect, it } from 'vitest';
import { DatePatternError, compileDatePattern } from '../src/partition/date-pattern.js';

describe('unsupported date pattern letters', () => {
  const cases: Array<[string, string]> = [
    ['EEE yyyy-MM-dd', 'E'],
    ['yyyy-MM-dd a', 'a'],
    ['yyyy-MM-dd HH:mm zzz', 'z'],
    ['yyyy-MM-dd VV', 'V'],
  ];
  for (const [pattern, letter] of cases) {
    it(`'${pattern}' names the letter it does not support`, () => {
      expect(() => compileDatePattern(pattern)).toThrow(DatePatternError);
      expect(() => compileDatePattern(pattern)).toThrow(`pattern letter '${letter}' is not supported`);
    });
  }

  it('a supported letter repeated too often is still "too many pattern letters"', () => {
    expect(() => compileDatePattern('yyyy-MMMMM-dd')).toThrow('too many pattern letters: MMMMM');
    expect(() => compileDatePattern('yyyy-MM-ddd')).toThrow('too many pattern letters: ddd');
  });
});
