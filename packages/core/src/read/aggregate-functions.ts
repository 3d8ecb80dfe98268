/**
 * Field aggregate functions of the `aggregation` merge engine (paimon-core's `FieldAggregator`
 * family), applied per value column to the records of one key in merge order.
 *
 * A result cell is a reference to the record whose value it is (selecting functions such as max
 * or last_value: the reader copies that value Arrow-natively, exact for every type), a computed
 * scalar (sum, product, listagg, bool_and/or), or a list of element/entry references into the
 * column's child data (collect, merge_map). Null handling, overflow wrapping and retraction follow
 * the Java implementation.
 */
import type { DataField, DataType, TableSchema, Value } from '@tidemark/format';
import { coreOptions } from '../core-options.js';
import { TidemarkError } from '../errors.js';
import { compareValues } from '../predicate.js';
import { UnsupportedTableFeatureError } from '../scan/errors.js';
import type { KeyValueRecord } from './key-value-record.js';

/** Aggregate function names this reader implements (`primary-key` is the implicit key function). */
export type AggregateFunctionName =
  | 'sum'
  | 'product'
  | 'max'
  | 'min'
  | 'last_value'
  | 'last_non_null_value'
  | 'first_value'
  | 'first_non_null_value'
  | 'listagg'
  | 'bool_and'
  | 'bool_or'
  | 'collect'
  | 'merge_map'
  | 'primary-key';

/** How one column is aggregated. */
export interface FieldAggregation {
  readonly field: string;
  readonly type: DataType;
  readonly fn: AggregateFunctionName;
  /** `fields.<f>.ignore-retract`: -U/-D records leave the value unchanged. */
  readonly ignoreRetract: boolean;
  /** `fields.<f>.list-agg-delimiter` (listagg; default ','). */
  readonly delimiter: string;
  /** `fields.<f>.distinct` (collect, listagg). */
  readonly distinct: boolean;
}

/** An arithmetic failure while aggregating (e.g. integer division by zero in a product retraction). */
export class AggregationError extends TidemarkError {}

/** Functions that cannot retract: a -U/-D record fails the merge unless `fields.<f>.ignore-retract`. */
export const NON_RETRACTABLE_FUNCTIONS: ReadonlySet<AggregateFunctionName> = new Set<AggregateFunctionName>([
  'first_value',
  'first_non_null_value',
  'max',
  'min',
  'bool_and',
  'bool_or',
  'listagg',
]);

/** One element of an ARRAY cell, or one entry of a MAP cell, in the column's child data. */
export interface ElementRef {
  /** Chunk of the column the element lives in. */
  readonly chunk: number;
  /** Position in that chunk's child data (list values / map entries). */
  readonly index: number;
  /** Identity for equality: the element (collect) or the map key (merge_map), canonically encoded. */
  readonly id: string;
}

/** A merged cell: null, a record's value, a computed scalar, or a list of elements/entries. */
export type AggregatedCell =
  null | { readonly ref: KeyValueRecord } | { readonly value: Exclude<Value, null> } | { readonly elements: readonly ElementRef[] };

/** Access to the column values of records (column = index into the aggregated fields). */
export interface AggregationInput {
  isNull(record: KeyValueRecord, column: number): boolean;
  value(record: KeyValueRecord, column: number): Value;
  /** Elements of an ARRAY cell or entries of a MAP cell (not called for null cells). */
  elements(record: KeyValueRecord, column: number): readonly ElementRef[];
}

const SUPPORTED = new Set<string>([
  'sum',
  'product',
  'max',
  'min',
  'last_value',
  'last_non_null_value',
  'first_value',
  'first_non_null_value',
  'listagg',
  'bool_and',
  'bool_or',
  'collect',
  'merge_map',
]);
/**
 * Every aggregate function name Paimon knows (its `FieldAggregatorFactory` identifiers), including
 * ones this reader lacks: a table option naming anything else is a typo.
 */
export const PAIMON_AGGREGATE_FUNCTIONS: ReadonlySet<string> = new Set<string>([
  ...SUPPORTED,
  'first_not_null_value',
  'avg',
  'hll_sketch',
  'theta_sketch',
  'rbm32',
  'rbm64',
  'nested_update',
  'nested_partial_update',
  'merge_map_with_keytime',
  'primary-key',
]);
const NUMERIC = new Set(['TINYINT', 'SMALLINT', 'INT', 'BIGINT', 'FLOAT', 'DOUBLE', 'DECIMAL']);
const COMPARABLE = new Set([...NUMERIC, 'BOOLEAN', 'CHAR', 'VARCHAR', 'BINARY', 'VARBINARY', 'DATE', 'TIME', 'TIMESTAMP', 'TIMESTAMP_LTZ']);

/**
 * Resolves the aggregate function of every field like Java's `AggregateMergeFunction`: sequence
 * fields use last_value, primary keys are not aggregated, then `fields.<f>.aggregate-function`,
 * `fields.default-aggregate-function`, and finally last_non_null_value.
 *
 * @throws UnsupportedTableFeatureError for functions this reader lacks or a type the function rejects.
 */
export function fieldAggregations(schema: TableSchema, sequenceFields: readonly string[]): Map<string, FieldAggregation> {
  const o = coreOptions(schema);
  const out = new Map<string, FieldAggregation>();
  for (const f of schema.fields) {
    let fn: string;
    if (sequenceFields.includes(f.name)) fn = 'last_value';
    else if (schema.primaryKeys.includes(f.name)) fn = 'primary-key';
    else {
      fn = o.fieldAggregateFunction(f.name) ?? o.fieldsDefaultAggregateFunction ?? 'last_non_null_value';
      if (fn === 'first_not_null_value') fn = 'first_non_null_value';
      if (!SUPPORTED.has(fn)) {
        throw new UnsupportedTableFeatureError(
          `aggregate function '${fn}' of field '${f.name}' is not supported for reading (supported: ${[...SUPPORTED].join(', ')})`,
        );
      }
      checkType(f, fn);
    }
    out.set(f.name, {
      field: f.name,
      type: f.type,
      fn: fn as AggregateFunctionName,
      ignoreRetract: o.fieldIgnoreRetract(f.name),
      delimiter: o.fieldListAggDelimiter(f.name),
      distinct: o.fieldDistinct(f.name),
    });
  }
  return out;
}

function checkType(f: DataField, fn: string): void {
  const root = f.type.root;
  const ok =
    fn === 'sum' || fn === 'product'
      ? NUMERIC.has(root)
      : fn === 'max' || fn === 'min'
        ? COMPARABLE.has(root)
        : fn === 'listagg'
          ? root === 'VARCHAR' || root === 'CHAR'
          : fn === 'bool_and' || fn === 'bool_or'
            ? root === 'BOOLEAN'
            : fn === 'collect'
              ? root === 'ARRAY'
              : fn === 'merge_map'
                ? root === 'MAP'
                : true;
  if (!ok) {
    throw new UnsupportedTableFeatureError(`aggregate function '${fn}' cannot aggregate field '${f.name}' of type ${root}`);
  }
}

/** The running aggregation of one column for one key. */
export interface ColumnAggregator {
  agg(acc: AggregatedCell, record: KeyValueRecord): AggregatedCell;
  retract(acc: AggregatedCell, record: KeyValueRecord): AggregatedCell;
  reset(): void;
}

/** Creates the aggregator of column `column` (index into the input's columns). */
export function createAggregator(spec: FieldAggregation, column: number, input: AggregationInput): ColumnAggregator {
  const inner = baseAggregator(spec, column, input);
  if (!spec.ignoreRetract) return inner;
  return { agg: inner.agg, reset: inner.reset, retract: (acc) => acc };
}

function baseAggregator(spec: FieldAggregation, column: number, input: AggregationInput): ColumnAggregator {
  return AGGREGATOR_FACTORIES[spec.fn](aggregatorKit(spec, column, input));
}

/** What the aggregator of one column is built from: its values, and the shapes Java's functions share. */
interface AggregatorKit {
  readonly spec: FieldAggregation;
  readonly column: number;
  readonly input: AggregationInput;
  readonly isNull: (r: KeyValueRecord) => boolean;
  /** The record's value as a cell (null when it is null). */
  readonly ref: (r: KeyValueRecord) => AggregatedCell;
  readonly valueOf: (cell: Exclude<AggregatedCell, null>) => Value;
  readonly elementsOf: (cell: Exclude<AggregatedCell, null>) => readonly ElementRef[];
  /** The retraction of a function that cannot retract: fails as Java does. */
  readonly noRetract: () => never;
  /** Java's shape for most functions: a null side yields the other side, else `op` of both. */
  readonly combine: (op: (a: Value, b: Value) => Value) => (acc: AggregatedCell, r: KeyValueRecord) => AggregatedCell;
}

function aggregatorKit(spec: FieldAggregation, column: number, input: AggregationInput): AggregatorKit {
  const isNull = (r: KeyValueRecord): boolean => input.isNull(r, column);
  const ref = (r: KeyValueRecord): AggregatedCell => (isNull(r) ? null : { ref: r });
  const valueOf = (cell: Exclude<AggregatedCell, null>): Value => {
    if ('ref' in cell) return input.value(cell.ref, column);
    if ('value' in cell) return cell.value;
    throw new TypeError('element cell read as a scalar');
  };
  const elementsOf = (cell: Exclude<AggregatedCell, null>): readonly ElementRef[] => {
    if ('ref' in cell) return input.elements(cell.ref, column);
    if ('elements' in cell) return cell.elements;
    throw new TypeError('scalar cell read as elements');
  };
  const noRetract = (): never => {
    throw new UnsupportedTableFeatureError(
      `aggregate function '${spec.fn}' of field '${spec.field}' does not support retraction (-U/-D records); ` +
        `Java Paimon fails the same way; set 'fields.${spec.field}.ignore-retract' = 'true' to ignore them`,
    );
  };
  const combine =
    (op: (a: Value, b: Value) => Value) =>
    (acc: AggregatedCell, r: KeyValueRecord): AggregatedCell => {
      if (acc === null || isNull(r)) return acc ?? ref(r);
      return computed(op(valueOf(acc), input.value(r, column)));
    };
  return { spec, column, input, isNull, ref, valueOf, elementsOf, noRetract, combine };
}

/** The `reset` of functions that keep no state between keys. */
function noReset(): void {}

/** The aggregator of each function, built from its column's kit. */
const AGGREGATOR_FACTORIES: { readonly [F in AggregateFunctionName]: (kit: AggregatorKit) => ColumnAggregator } = {
  'primary-key': ({ ref }) => ({ reset: noReset, agg: (_acc, r) => ref(r), retract: (_acc, r) => ref(r) }),
  last_value: ({ ref }) => ({ reset: noReset, agg: (_acc, r) => ref(r), retract: () => null }),
  last_non_null_value: ({ isNull }) => ({
    reset: noReset,
    agg: (acc, r) => (isNull(r) ? acc : { ref: r }),
    retract: (acc, r) => (isNull(r) ? acc : null),
  }),
  first_value: firstValueAggregator,
  first_non_null_value: firstNonNullValueAggregator,
  max: (kit) => extremeAggregator(kit, 1),
  min: (kit) => extremeAggregator(kit, -1),
  sum: sumAggregator,
  product: ({ spec, combine }) => {
    const arith = arithmetic(spec);
    // Java's retraction of a product divides; with no accumulator it yields the input itself.
    return { reset: noReset, agg: combine(arith.multiply), retract: combine(arith.divide) };
  },
  bool_and: ({ combine, noRetract }) => ({ reset: noReset, agg: combine((a, b) => (a as boolean) && (b as boolean)), retract: noRetract }),
  bool_or: ({ combine, noRetract }) => ({ reset: noReset, agg: combine((a, b) => (a as boolean) || (b as boolean)), retract: noRetract }),
  listagg: listaggAggregator,
  collect: collectAggregator,
  merge_map: mergeMapAggregator,
};

function firstValueAggregator({ ref, noRetract }: AggregatorKit): ColumnAggregator {
  let initialized = false;
  return {
    agg: (acc, r) => {
      if (initialized) return acc;
      initialized = true;
      return ref(r);
    },
    retract: noRetract,
    reset: () => (initialized = false),
  };
}

function firstNonNullValueAggregator({ isNull, noRetract }: AggregatorKit): ColumnAggregator {
  let initialized = false;
  return {
    agg: (acc, r) => {
      if (initialized || isNull(r)) return acc;
      initialized = true;
      return { ref: r };
    },
    retract: noRetract,
    reset: () => (initialized = false),
  };
}

/** max (`sign` 1) or min (-1). */
function extremeAggregator({ input, column, isNull, ref, valueOf, noRetract }: AggregatorKit, sign: number): ColumnAggregator {
  return {
    reset: noReset,
    agg: (acc, r) => {
      if (acc === null || isNull(r)) return acc ?? ref(r);
      // Java keeps the accumulator on ties (and when the comparison is undefined, e.g. NaN).
      return sign * compareValues(valueOf(acc), input.value(r, column)) < 0 ? { ref: r } : acc;
    },
    retract: noRetract,
  };
}

function sumAggregator({ spec, input, column, isNull, valueOf, combine }: AggregatorKit): ColumnAggregator {
  const arith = arithmetic(spec);
  return {
    reset: noReset,
    agg: combine(arith.add),
    retract: (acc, r) => {
      if (acc === null) return isNull(r) ? null : computed(arith.negate(input.value(r, column)));
      if (isNull(r)) return acc;
      return computed(arith.subtract(valueOf(acc), input.value(r, column)));
    },
  };
}

function listaggAggregator({ spec, input, column, isNull, valueOf, noRetract }: AggregatorKit): ColumnAggregator {
  return {
    reset: noReset,
    agg: (acc, r) => {
      // Paimon 1.x: blank strings are skipped on both sides.
      if (isNull(r) || isBlank(input.value(r, column) as string)) return acc;
      if (acc === null || isBlank(valueOf(acc) as string)) return { ref: r };
      const a = valueOf(acc) as string;
      const b = input.value(r, column) as string;
      return { value: spec.distinct ? listaggDistinct(a, b, spec.delimiter) : a + spec.delimiter + b };
    },
    retract: noRetract,
  };
}

function collectAggregator({ spec, input, column, isNull, ref, elementsOf }: AggregatorKit): ColumnAggregator {
  return {
    reset: noReset,
    agg: (acc, r) => {
      if (acc === null && isNull(r)) return null;
      if ((acc === null || isNull(r)) && !spec.distinct) return acc ?? ref(r);
      const all = [...(acc === null ? [] : elementsOf(acc)), ...(isNull(r) ? [] : input.elements(r, column))];
      if (!spec.distinct) return { elements: all };
      const seen = new Set<string>();
      return { elements: all.filter((e) => !seen.has(e.id) && (seen.add(e.id), true)) };
    },
    retract: (acc, r) => {
      if (acc === null) return null;
      if (isNull(r)) return acc;
      const remove = new Map<string, number>();
      for (const e of input.elements(r, column)) remove.set(e.id, (remove.get(e.id) ?? 0) + 1);
      const kept: ElementRef[] = [];
      for (const e of elementsOf(acc)) {
        const n = remove.get(e.id) ?? 0;
        if (n > 0) remove.set(e.id, n - 1);
        else kept.push(e);
      }
      return { elements: kept };
    },
  };
}

function mergeMapAggregator({ input, column, isNull, ref, elementsOf }: AggregatorKit): ColumnAggregator {
  return {
    reset: noReset,
    agg: (acc, r) => {
      if (acc === null || isNull(r)) return acc ?? ref(r);
      const merged = new Map<string, ElementRef>();
      for (const e of elementsOf(acc)) merged.set(e.id, e);
      for (const e of input.elements(r, column)) merged.set(e.id, e);
      return { elements: [...merged.values()] };
    },
    retract: (acc, r) => {
      if (acc === null) return null;
      if (isNull(r)) return acc;
      const keys = new Set(input.elements(r, column).map((e) => e.id));
      return { elements: elementsOf(acc).filter((e) => !keys.has(e.id)) };
    },
  };
}

function computed(v: Value): AggregatedCell {
  return v === null ? null : { value: v };
}

function isBlank(s: string): boolean {
  return s.trim().length === 0;
}

function listaggDistinct(acc: string, input: string, delimiter: string): string {
  const split = (s: string): string[] => (delimiter === '' ? s.split(/\s+/) : s.split(delimiter));
  const existing = new Set(split(acc));
  let out = acc;
  for (const token of split(input)) {
    if (isBlank(token) || existing.has(token)) continue;
    existing.add(token);
    out += delimiter + token;
  }
  return out;
}

interface Arithmetic {
  add(a: Value, b: Value): Value;
  subtract(a: Value, b: Value): Value;
  negate(a: Value): Value;
  multiply(a: Value, b: Value): Value;
  divide(a: Value, b: Value): Value;
}

/** Java arithmetic of a numeric type: fixed-width wrap-around, float rounding, exact decimals. */
function arithmetic(spec: FieldAggregation): Arithmetic {
  const t = spec.type;
  const divZero = (): never => {
    throw new AggregationError(`product retraction of field '${spec.field}' divides by zero`);
  };
  const intOps = (wrap: (x: number) => number): Arithmetic => ({
    add: (a, b) => wrap((a as number) + (b as number)),
    subtract: (a, b) => wrap((a as number) - (b as number)),
    negate: (a) => wrap(-(a as number)),
    multiply: (a, b) => wrap(Number(BigInt.asIntN(32, BigInt(a as number) * BigInt(b as number)))),
    divide: (a, b) => ((b as number) === 0 ? divZero() : wrap(Math.trunc((a as number) / (b as number)))),
  });
  switch (t.root) {
    case 'TINYINT':
      return intOps((x) => (x << 24) >> 24);
    case 'SMALLINT':
      return intOps((x) => (x << 16) >> 16);
    case 'INT':
      return intOps((x) => x | 0);
    case 'BIGINT': {
      const w = (x: bigint): bigint => BigInt.asIntN(64, x);
      return {
        add: (a, b) => w((a as bigint) + (b as bigint)),
        subtract: (a, b) => w((a as bigint) - (b as bigint)),
        negate: (a) => w(-(a as bigint)),
        multiply: (a, b) => w((a as bigint) * (b as bigint)),
        divide: (a, b) => ((b as bigint) === 0n ? divZero() : w((a as bigint) / (b as bigint))),
      };
    }
    case 'FLOAT':
    case 'DOUBLE': {
      const r = t.root === 'FLOAT' ? Math.fround : (x: number): number => x;
      return {
        add: (a, b) => r((a as number) + (b as number)),
        subtract: (a, b) => r((a as number) - (b as number)),
        negate: (a) => -(a as number),
        multiply: (a, b) => r((a as number) * (b as number)),
        divide: (a, b) => r((a as number) / (b as number)),
      };
    }
    case 'DECIMAL': {
      const { precision, scale } = t;
      const limit = 10n ** BigInt(precision);
      const pow = 10n ** BigInt(scale);
      // Java's Decimal.fromBigDecimal returns null when the value does not fit the precision.
      const dec = (u: bigint): Value => (u >= limit || u <= -limit ? null : { unscaled: u, scale });
      // DecimalUtils.add/subtract: for precision <= 18 the unscaled longs are added unchecked
      // (the result may exceed the precision); only a long overflow goes through fromBigDecimal.
      const addSub = (x: bigint): Value => (precision <= 18 && x === BigInt.asIntN(64, x) ? { unscaled: x, scale } : dec(x));
      const u = (v: Value): bigint => (v as { unscaled: bigint }).unscaled;
      return {
        add: (a, b) => addSub(u(a) + u(b)),
        subtract: (a, b) => addSub(u(a) - u(b)),
        negate: (a) => dec(-u(a)),
        multiply: (a, b) => dec(divideHalfUp(u(a) * u(b), pow)),
        divide: (a, b) => {
          const d = u(b);
          if (d === 0n) divZero();
          if (!terminates(u(a), d)) {
            throw new AggregationError(
              `product retraction of field '${spec.field}' has a non-terminating decimal quotient (Java's BigDecimal.divide fails too)`,
            );
          }
          return dec(divideHalfUp(u(a) * pow, d));
        },
      };
    }
    default:
      throw new UnsupportedTableFeatureError(`field '${spec.field}' of type ${t.root} cannot be summed or multiplied`);
  }
}

/** n / d rounded half away from zero (BigDecimal HALF_UP). */
function divideHalfUp(n: bigint, d: bigint): bigint {
  const negative = n < 0n !== d < 0n;
  const an = n < 0n ? -n : n;
  const ad = d < 0n ? -d : d;
  let q = an / ad;
  if ((an % ad) * 2n >= ad) q += 1n;
  return negative ? -q : q;
}

/** True when n / d has a finite decimal expansion. */
function terminates(n: bigint, d: bigint): boolean {
  const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? a : gcd(b, a % b));
  const an = n < 0n ? -n : n;
  let ad = d < 0n ? -d : d;
  if (an !== 0n) ad /= gcd(an, ad);
  while (ad % 2n === 0n) ad /= 2n;
  while (ad % 5n === 0n) ad /= 5n;
  return ad === 1n;
}

/** Options of {@link aggregateKey}. */
export interface AggregateKeyOptions {
  /** `aggregation.remove-record-on-delete`: a -D record removes the key (later records start afresh). */
  readonly removeRecordOnDelete: boolean;
  /** `ignore-delete`: -U/-D records are skipped. */
  readonly ignoreDelete: boolean;
  /** NOT NULL flag per column (a removed row keeps the -D record's NOT NULL values, like Java). */
  readonly notNull: readonly boolean[];
}

/** The aggregation of one key: the cells, whether the key was removed, and its last record. */
export interface AggregatedKey {
  readonly cells: AggregatedCell[];
  /** The last record was a -D with remove-record-on-delete: the cells hold only its NOT NULL values. */
  readonly deleted: boolean;
  readonly last: KeyValueRecord;
}

/**
 * Aggregates the records of one key (already in merge order), as Java's `AggregateMergeFunction`
 * does. Returns null when every record was skipped (retractions with ignore-delete).
 */
export function aggregateKey(
  records: readonly KeyValueRecord[],
  aggregators: readonly ColumnAggregator[],
  options: AggregateKeyOptions,
  isRetractionKind: (kind: number) => boolean,
  deleteKind: number,
): AggregatedKey | null {
  for (const a of aggregators) a.reset();
  let row: AggregatedCell[] = aggregators.map(() => null);
  let last: KeyValueRecord | null = null;
  let deleted = false;
  for (const r of records) {
    const retract = isRetractionKind(r.kind);
    if (retract && options.ignoreDelete) continue;
    last = r;
    deleted = options.removeRecordOnDelete && r.kind === deleteKind;
    if (deleted) {
      row = aggregators.map((_, c) => (options.notNull[c] ? { ref: r } : null));
      continue;
    }
    row = row.map((acc, c) => (retract ? aggregators[c]!.retract(acc, r) : aggregators[c]!.agg(acc, r)));
  }
  return last === null ? null : { cells: row, deleted, last };
}
