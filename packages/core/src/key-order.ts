/**
 * The order and equality of primary keys (and of `sequence.field` values), as Java Paimon's
 * generated record comparator has them: nulls first, FLOAT and DOUBLE by `Float.compare` /
 * `Double.compare` (-0.0 sorts before 0.0 and differs from it; NaN is one value, greater than
 * +Infinity), strings by their UTF-8 bytes, everything else by value. Every place that sorts,
 * merges or looks up keys (the write buffer, reads, compaction, lookups) compares through here,
 * so a key is the same key everywhere; the bucket hash agrees because BinaryRow writes a float's
 * bits (format `binary-row.ts`, one NaN bit pattern).
 *
 * Predicates keep SQL-like comparison (predicate.ts `compareValues`): this is key identity only.
 */
import type { Value } from '@tidemark/format';
import { compareValues } from './predicate.js';

/**
 * Java's `Double.compare` (and `Float.compare`, which orders the same way): -1, 0 or 1, with
 * -0.0 < 0.0 and every NaN equal to every NaN and greater than any other value.
 */
export function compareFloats(a: number, b: number): number {
  if (a < b) return -1;
  if (a > b) return 1;
  if (a === b) {
    if (a !== 0) return 0;
    // 0 === -0: the sign decides, as doubleToLongBits does.
    const negA = 1 / a < 0;
    return negA === 1 / b < 0 ? 0 : negA ? -1 : 1;
  }
  // At least one NaN.
  const nanA = a !== a;
  return nanA === (b !== b) ? 0 : nanA ? 1 : -1;
}

/** Compares two non-null values of one key column in Java's order (see the module comment). */
export function compareKeyValues(a: Value, b: Value): number {
  if (typeof a === 'number' && typeof b === 'number') return compareFloats(a, b);
  return compareValues(a, b);
}

/**
 * Compares two keys field by field: nulls first, then {@link compareKeyValues}; `sign` -1
 * reverses the comparison of two non-null values (a descending `sequence.field`), not where
 * nulls go, as Java's generated comparator does.
 */
export function compareKeys(a: readonly Value[], b: readonly Value[], sign = 1): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? null;
    const y = b[i] ?? null;
    if (x === null || y === null) {
      if (x === y) continue;
      return x === null ? -1 : 1;
    }
    const c = compareKeyValues(x, y);
    if (c !== 0) return sign * c;
  }
  return 0;
}
