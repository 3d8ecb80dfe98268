/**
 * Bucket pruning (Paimon's `BucketSelectConverter`): a filter that fixes every bucket-key column
 * of a fixed-bucket table to a few values (`=`, `IN`, an `OR` of those, under the top-level `AND`)
 * can only match rows in the buckets those values hash to, so a key lookup reads one bucket
 * instead of all. The values are encoded and hashed with the writer's own functions
 * (`encodeBinaryRow`, `bucketOf`), per the bucket count each file was written with.
 *
 * Never for dynamic buckets (`bucket` = -1: a key's bucket is assigned, not hashed), postpone
 * buckets, or a filter that leaves a bucket-key column open.
 */
import {
  bucketOf,
  encodeBinaryRow,
  trimmedPrimaryKeys,
  type DataField,
  type DataType,
  type TableSchema,
  type Value,
} from '@tidemark/format';
import { tableOptions } from '../core-options.js';
import type { Predicate } from '../predicate.js';

/** Whether a file of `bucket` (written with `totalBuckets` buckets) may hold rows the filter wants. */
export type BucketSelector = (bucket: number, totalBuckets: number) => boolean;

/** Value combinations hashed at most; a filter fixing more combinations reads every bucket. */
const MAX_COMBINATIONS = 10_000;

/** The bucket-key columns of a fixed-bucket table (`bucket-key`, else the primary key minus partition keys); null otherwise. */
export function fixedBucketKey(schema: TableSchema): DataField[] | null {
  const options = tableOptions(schema);
  if (options.bucket <= 0) return null;
  let names = options.bucketKey;
  if (names.length === 0 && schema.primaryKeys.length > 0) names = trimmedPrimaryKeys(schema);
  if (names.length === 0) return null;
  const fields = names.map((n) => schema.fields.find((f) => f.name === n));
  return fields.every((f) => f !== undefined) ? (fields as DataField[]) : null;
}

/**
 * The buckets `predicate` can match on a fixed-bucket table of `schema`, or null when it does not
 * fix every bucket-key column (every bucket is read then).
 */
export function bucketSelector(schema: TableSchema, predicate: Predicate | null): BucketSelector | null {
  if (predicate === null) return null;
  const keyFields = fixedBucketKey(schema);
  if (keyFields === null) return null;
  const fixed = fixedValues(predicate);
  if (keyFields.length === 1) {
    const literals = fixed.get(keyFields[0]!.name);
    const encoded = literals === undefined ? null : encodedLiterals(keyFields[0]!.type, literals);
    if (encoded === null) return null;
    const rows = encoded.flatMap((e) => e.rows);
    return rows.length > MAX_COMBINATIONS ? null : selectorOf(rows);
  }
  const choices: Value[][] = [];
  let combinations = 1;
  for (const field of keyFields) {
    const literals = fixed.get(field.name);
    if (literals === undefined) return null;
    const values: Value[] = [];
    for (const literal of literals) {
      const stored = storedForms(field.type, literal);
      if (stored === null) return null;
      values.push(...stored);
    }
    choices.push(values);
    combinations *= values.length;
    if (combinations > MAX_COMBINATIONS) return null;
  }
  const types = keyFields.map((f) => f.type);
  const rows: Uint8Array[] = [];
  const visit = (i: number, picked: Value[]): void => {
    if (i === choices.length) {
      rows.push(encodeBinaryRow(types, picked));
      return;
    }
    for (const v of choices[i]!) visit(i + 1, [...picked, v]);
  };
  visit(0, []);
  return selectorOf(rows);
}

/** The selector of the buckets the encoded bucket-key rows hash to. */
function selectorOf(rows: readonly Uint8Array[]): BucketSelector {
  // Files keep the bucket count they were written with (a rescaled table holds both).
  const byTotal = new Map<number, ReadonlySet<number>>();
  return (bucket, totalBuckets) => {
    if (totalBuckets <= 0) return true;
    let buckets = byTotal.get(totalBuckets);
    if (buckets === undefined) byTotal.set(totalBuckets, (buckets = new Set(rows.map((row) => bucketOf(row, totalBuckets)))));
    return buckets.has(bucket);
  };
}

/**
 * For a filter that is a list of values of the single bucket-key column alone (`k = v`,
 * `k IN (…)`): the part of the list whose rows lie in a bucket (per bucket count), so that each
 * bucket is searched for its own keys only; null for any other filter or table.
 */
export function keyListByBucket(schema: TableSchema, predicate: Predicate): ((bucket: number, totalBuckets: number) => Predicate) | null {
  const keyFields = fixedBucketKey(schema);
  if (keyFields === null || keyFields.length !== 1) return null;
  const field = keyFields[0]!;
  const isList = (predicate.kind === 'in' && !predicate.negated) || (predicate.kind === 'compare' && predicate.op === '=');
  if (!isList || predicate.column !== field.name) return null;
  const forms = encodedLiterals(field.type, fixedValues(predicate).get(field.name) ?? []);
  if (forms === null) return null;
  const byTotal = new Map<number, Map<number, Predicate>>();
  return (bucket, totalBuckets) => {
    let lists = byTotal.get(totalBuckets);
    if (lists === undefined) {
      const values = new Map<number, unknown[]>();
      for (const f of forms) {
        for (const b of new Set(f.rows.map((row) => bucketOf(row, totalBuckets)))) {
          const list = values.get(b);
          if (list === undefined) values.set(b, [f.literal]);
          else list.push(f.literal);
        }
      }
      lists = new Map(
        [...values].map(([b, list]) => [b, { kind: 'in', column: field.name, type: field.type, values: list, negated: false }]),
      );
      byTotal.set(totalBuckets, lists);
    }
    return lists.get(bucket) ?? { kind: 'in', column: field.name, type: field.type, values: [], negated: false };
  };
}

/** Each literal of a list with the bucket-key rows of its stored forms; once per list (bucket pruning and the per-bucket lists share it). */
const encodedByList = new WeakMap<readonly unknown[], WeakMap<DataType, readonly EncodedLiteral[] | null>>();

interface EncodedLiteral {
  readonly literal: unknown;
  readonly rows: readonly Uint8Array[];
}

/** The literals of a single-column bucket key of `type`, encoded as the writer hashes them; null for a literal of an unexpected representation. */
function encodedLiterals(type: DataType, literals: readonly unknown[]): readonly EncodedLiteral[] | null {
  let byType = encodedByList.get(literals);
  if (byType === undefined) encodedByList.set(literals, (byType = new WeakMap()));
  if (byType.has(type)) return byType.get(type)!;
  let out: EncodedLiteral[] | null = [];
  for (const literal of literals) {
    if (literal === null || literal === undefined) continue;
    const stored = storedForms(type, literal);
    if (stored === null) {
      out = null;
      break;
    }
    out.push({ literal, rows: stored.map((v) => encodeBinaryRow([type], [v])) });
  }
  byType.set(type, out);
  return out;
}

/** Whether `predicate` fixes every column of `columns` to a list of values (a key lookup when they are the key). */
export function fixesColumns(predicate: Predicate | null, columns: readonly string[]): boolean {
  if (predicate === null || columns.length === 0) return false;
  const fixed = fixedValues(predicate);
  return columns.every((c) => fixed.has(c));
}

/**
 * Columns the predicate fixes to a list of values, from its top-level conjuncts: `c = v`,
 * `c IN (…)` and an OR of those over one column. A NULL literal matches no row, so it adds no value.
 * A row the predicate keeps holds, in each such column, a value equal to one of the list's.
 */
export function fixedValues(predicate: Predicate): Map<string, unknown[]> {
  // One answer per predicate object: a read asks once per split, and the key search prepares
  // its sorted keys once per list (see `sortedKeyRows`).
  let out = fixedByPredicate.get(predicate);
  if (out === undefined) fixedByPredicate.set(predicate, (out = collectFixedValues(predicate)));
  return out;
}

const fixedByPredicate = new WeakMap<Predicate, Map<string, unknown[]>>();

function collectFixedValues(predicate: Predicate): Map<string, unknown[]> {
  const out = new Map<string, unknown[]>();
  for (const conjunct of predicate.kind === 'and' ? predicate.children : [predicate]) {
    const fixed = equalities(conjunct);
    if (fixed === null) continue;
    const known = out.get(fixed.column);
    // Each conjunct alone bounds the column: keep the shorter list.
    if (known === undefined || fixed.values.length < known.length) out.set(fixed.column, fixed.values);
  }
  return out;
}

function equalities(p: Predicate): { column: string; values: unknown[] } | null {
  switch (p.kind) {
    case 'compare':
      return p.op === '=' ? { column: p.column, values: p.value === null || p.value === undefined ? [] : [p.value] } : null;
    case 'in':
      return p.negated ? null : { column: p.column, values: p.values.filter((v) => v !== null && v !== undefined) };
    case 'or': {
      let column: string | undefined;
      const values: unknown[] = [];
      for (const child of p.children) {
        const e = equalities(child);
        if (e === null || (column !== undefined && e.column !== column)) return null;
        column = e.column;
        values.push(...e.values);
      }
      return column === undefined ? null : { column, values };
    }
    default:
      return null;
  }
}

/**
 * The values a row holding a value equal to `literal` (by `compareValues`) can have stored in a
 * column of `type`, as the writer hashes them: none when no stored value can equal it, several
 * where equal values are stored differently (0.0 and -0.0), null for a literal of an unexpected
 * representation (then no bucket is pruned).
 */
function storedForms(type: DataType, literal: unknown): Value[] | null {
  switch (type.root) {
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
    case 'DATE':
    case 'TIME': {
      const n = typeof literal === 'bigint' ? Number(literal) : literal;
      if (typeof n !== 'number') return null;
      return Number.isInteger(n) && withinEncodable(type, n) ? [n] : [];
    }
    case 'BIGINT':
      if (typeof literal === 'bigint') return BigInt.asIntN(64, literal) === literal ? [literal] : [];
      if (typeof literal !== 'number') return null;
      return Number.isInteger(literal) && Math.abs(literal) < 2 ** 63 ? [BigInt(literal)] : [];
    case 'FLOAT':
    case 'DOUBLE': {
      const n = typeof literal === 'bigint' ? Number(literal) : literal;
      if (typeof n !== 'number') return null;
      // 0.0 equals -0.0, and the two hash differently.
      return n === 0 ? [0, -0] : [n];
    }
    case 'BOOLEAN':
      return typeof literal === 'boolean' ? [literal] : null;
    case 'CHAR':
    case 'VARCHAR':
      return typeof literal === 'string' ? [literal] : null;
    case 'BINARY':
    case 'VARBINARY':
      return literal instanceof Uint8Array ? [literal] : null;
    case 'DECIMAL': {
      if (!isDecimalLiteral(literal)) return null;
      try {
        // The column's scale and precision: a value that does not fit is held by no row.
        encodeBinaryRow([type], [literal]);
        return [literal];
      } catch {
        return [];
      }
    }
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ':
      return isTimestampLiteral(literal) && Number.isSafeInteger(literal.millis) ? [literal] : null;
    default:
      return null;
  }
}

function withinEncodable(type: DataType, n: number): boolean {
  const bits = type.root === 'TINYINT' ? 8 : type.root === 'SMALLINT' ? 16 : 32;
  return n >= -(2 ** (bits - 1)) && n < 2 ** (bits - 1);
}

function isDecimalLiteral(v: unknown): v is { unscaled: bigint; scale: number } {
  return typeof v === 'object' && v !== null && typeof (v as { unscaled?: unknown }).unscaled === 'bigint';
}

function isTimestampLiteral(v: unknown): v is { millis: number; nanoOfMillis: number } {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as { millis?: unknown }).millis === 'number' &&
    typeof (v as { nanoOfMillis?: unknown }).nanoOfMillis === 'number'
  );
}
