/**
 * Predicates over top-level columns, evaluated against ORC column statistics (file, stripe or row
 * group) to skip data that cannot match. Evaluation is conservative: `false` only when the
 * statistics prove that no row matches; missing or unusable statistics mean "may match".
 */
import type { ColumnStatistics } from './proto.js';

/** A literal compared with column values: numbers/bigints for numeric and date (days) columns, strings for string columns. */
export type OrcLiteral = number | bigint | string | boolean;

/** A filter on top-level columns, by field name. */
export type OrcPredicate =
  | { readonly op: 'and' | 'or'; readonly children: readonly OrcPredicate[] }
  | { readonly op: 'not'; readonly child: OrcPredicate }
  | { readonly op: 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge'; readonly column: string; readonly value: OrcLiteral }
  | { readonly op: 'in'; readonly column: string; readonly values: readonly OrcLiteral[] }
  | { readonly op: 'isNull' | 'isNotNull'; readonly column: string };

/** Column names a predicate refers to. */
export function predicateColumns(p: OrcPredicate, out = new Set<string>()): Set<string> {
  if ('children' in p) {
    for (const c of p.children) predicateColumns(c, out);
  } else if ('child' in p) predicateColumns(p.child, out);
  else out.add(p.column);
  return out;
}

interface Range {
  readonly min: OrcLiteral;
  readonly max: OrcLiteral;
}

function range(s: ColumnStatistics): Range | null {
  if (s.intMin !== undefined && s.intMax !== undefined) return { min: s.intMin, max: s.intMax };
  if (s.doubleMin !== undefined && s.doubleMax !== undefined) return { min: s.doubleMin, max: s.doubleMax };
  if (s.stringMin !== undefined && s.stringMax !== undefined) return { min: s.stringMin, max: s.stringMax };
  if (s.dateMin !== undefined && s.dateMax !== undefined) return { min: s.dateMin, max: s.dateMax };
  return null;
}

/** -1/0/1, or null when the two cannot be compared (different kinds). */
function compare(a: OrcLiteral, b: OrcLiteral): number | null {
  if (typeof a === 'string' || typeof b === 'string') {
    if (typeof a !== 'string' || typeof b !== 'string') return null;
    // ORC orders string statistics by UTF-8 bytes, which code point order matches.
    const x = Buffer.from(a, 'utf8');
    const y = Buffer.from(b, 'utf8');
    return Buffer.compare(x, y);
  }
  if (typeof a === 'boolean' || typeof b === 'boolean') return null;
  if (typeof a === 'bigint' || typeof b === 'bigint') {
    if ((typeof a === 'number' && !Number.isInteger(a)) || (typeof b === 'number' && !Number.isInteger(b))) {
      return Number(a) < Number(b) ? -1 : Number(a) > Number(b) ? 1 : 0;
    }
    const x = BigInt(a);
    const y = BigInt(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

/** False when `stats(column)` prove that no row can satisfy `p`. */
export function mayMatch(p: OrcPredicate, stats: (column: string) => ColumnStatistics | undefined, rows: number): boolean {
  switch (p.op) {
    case 'and':
      return p.children.every((c) => mayMatch(c, stats, rows));
    case 'or':
      return p.children.length === 0 || p.children.some((c) => mayMatch(c, stats, rows));
    case 'not':
      // Statistics bound values, not the negation of a condition: only "maybe" is safe.
      return true;
    default:
      break;
  }
  const s = stats(p.column);
  if (!s) return true;
  const values = s.numberOfValues;
  const hasNull = s.hasNull ?? true;
  if (p.op === 'isNull') return hasNull || values === null || values < rows;
  if (values === 0) return false; // every value is null, and null satisfies no comparison
  if (p.op === 'isNotNull') return true;
  const r = range(s);
  if (!r) return true;
  const within = (v: OrcLiteral): boolean => {
    const lo = compare(v, r.min);
    const hi = compare(v, r.max);
    return lo === null || hi === null || (lo >= 0 && hi <= 0);
  };
  switch (p.op) {
    case 'eq':
      return within(p.value);
    case 'in':
      return p.values.some(within);
    case 'ne': {
      const lo = compare(p.value, r.min);
      const hi = compare(p.value, r.max);
      return !(lo === 0 && hi === 0);
    }
    case 'lt': {
      const c = compare(r.min, p.value);
      return c === null || c < 0;
    }
    case 'le': {
      const c = compare(r.min, p.value);
      return c === null || c <= 0;
    }
    case 'gt': {
      const c = compare(r.max, p.value);
      return c === null || c > 0;
    }
    case 'ge': {
      const c = compare(r.max, p.value);
      return c === null || c >= 0;
    }
  }
}
