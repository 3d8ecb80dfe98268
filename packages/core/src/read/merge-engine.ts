/**
 * Merge engines of primary-key tables (docs/format.md, "Merge engines"), applied to the records of one key
 * ordered by `sequence.field` values (when set), then sequence number. The aggregation engine's
 * field functions live in `aggregate-functions.ts`. Pure logic over record references so it can
 * be tested without files: the reader decides where each output column's value comes from.
 */
import type { TableSchema, Value } from '@tidemark/format';
import { coreOptions } from '../core-options.js';
import { compareValues } from '../predicate.js';
import { UnsupportedTableFeatureError } from '../scan/errors.js';
import {
  aggregateKey,
  createAggregator,
  fieldAggregations,
  type AggregatedCell,
  type AggregationInput,
  type FieldAggregation,
} from './aggregate-functions.js';

/** `_VALUE_KIND` values. */
export const ROW_KIND_INSERT = 0;
export const ROW_KIND_UPDATE_BEFORE = 1;
export const ROW_KIND_UPDATE_AFTER = 2;
export const ROW_KIND_DELETE = 3;

/** True for -U and -D rows (retractions). */
export function isRetraction(kind: number): boolean {
  return kind === ROW_KIND_UPDATE_BEFORE || kind === ROW_KIND_DELETE;
}

/** One row of a primary-key data file, by reference. */
export interface KeyValueRecord {
  /** Trimmed primary key values (values.ts representation). */
  readonly key: readonly Value[];
  readonly sequence: bigint;
  /** Values of the `sequence.field` columns, when the table has any (ordered before `sequence`). */
  readonly userSequence?: readonly Value[];
  /** `_VALUE_KIND`. */
  readonly kind: number;
  /** Chunk (file batch) and row the record's values live in. */
  readonly chunk: number;
  readonly row: number;
}

/** The merged row of one key: a record for all columns, or one source record per column. */
export interface MergedRow {
  readonly record: KeyValueRecord;
  /** Partial update: the record each column's value comes from (same order as the read columns). */
  readonly columnSources?: readonly KeyValueRecord[];
  /** Aggregation: the merged cell of each column (same order as the read columns). */
  readonly cells?: readonly AggregatedCell[];
}

/** Merge engine settings from the table options. */
export interface MergeEngineOptions {
  readonly engine: 'deduplicate' | 'first-row' | 'partial-update' | 'aggregation';
  /** Option `ignore-delete`: retractions are skipped. */
  readonly ignoreDelete: boolean;
  /** Option `partial-update.remove-record-on-delete` (or `aggregation.remove-record-on-delete`). */
  readonly removeRecordOnDelete: boolean;
  /** Option `sequence.field`: columns ordering the records of a key before `_SEQUENCE_NUMBER`. */
  readonly sequenceFields?: readonly string[];
  /** Aggregation engine: the function of every table field, by field name. */
  readonly aggregations?: ReadonlyMap<string, FieldAggregation>;
}

/**
 * Reads the merge engine settings of a primary-key table.
 *
 * @throws UnsupportedTableFeatureError for sequence groups, unsupported aggregate functions,
 *   a descending `sequence.field.sort-order`, or an unknown engine.
 */
export function mergeEngineOptions(schema: TableSchema): MergeEngineOptions {
  const o = coreOptions(schema);
  const engine = o.mergeEngine;
  if (engine !== 'deduplicate' && engine !== 'first-row' && engine !== 'partial-update' && engine !== 'aggregation') {
    throw new UnsupportedTableFeatureError(
      `merge engine '${engine}' is not supported for reading (supported: deduplicate, first-row, partial-update, aggregation)`,
    );
  }
  const ignoreDelete = o.ignoreDelete;
  const sequenceGroup = o.sequenceGroupKeys[0];
  if ((engine === 'partial-update' || engine === 'aggregation') && sequenceGroup !== undefined) {
    throw new UnsupportedTableFeatureError(`${engine} with sequence groups ('${sequenceGroup}') is not supported for reading`);
  }
  const partialAgg = o.aggregateFunctionKeys[0] ?? o.fieldsDefaultAggregateFunction ?? undefined;
  if (engine === 'partial-update' && partialAgg !== undefined) {
    throw new UnsupportedTableFeatureError('partial-update with aggregate functions is not supported for reading');
  }
  const sequenceFields = parseSequenceFields(schema, engine);
  const removeRecordOnDelete = engine === 'aggregation' ? o.aggregationRemoveRecordOnDelete : o.partialUpdateRemoveRecordOnDelete;
  return {
    engine,
    ignoreDelete,
    removeRecordOnDelete,
    ...(sequenceFields.length > 0 ? { sequenceFields } : {}),
    ...(engine === 'aggregation' ? { aggregations: fieldAggregations(schema, sequenceFields) } : {}),
  };
}

function parseSequenceFields(schema: TableSchema, engine: string): string[] {
  const o = coreOptions(schema);
  const names = o.sequenceField;
  if (names.length === 0) return [];
  if (engine === 'first-row') {
    throw new UnsupportedTableFeatureError(`option 'sequence.field' is not supported with merge engine first-row`);
  }
  const order = o.sequenceFieldSortOrder;
  if (order !== 'ascending') {
    throw new UnsupportedTableFeatureError(`option 'sequence.field.sort-order' = '${order}' is not supported for reading`);
  }
  for (const n of names) {
    if (!schema.fields.some((f) => f.name === n)) {
      throw new UnsupportedTableFeatureError(`sequence.field names '${n}', which is not a column of the table (schema ${schema.id})`);
    }
  }
  return [...names];
}

/**
 * Orders records by key, then `sequence.field` values (nulls first, when present), then sequence
 * number; ties keep their input order (stable sort).
 */
export function sortRecords(records: KeyValueRecord[]): KeyValueRecord[] {
  return records.sort(
    (a, b) =>
      compareKeys(a.key, b.key) ||
      (a.userSequence && b.userSequence ? compareKeys(a.userSequence, b.userSequence) : 0) ||
      (a.sequence < b.sequence ? -1 : a.sequence > b.sequence ? 1 : 0),
  );
}

/** Compares two keys field by field (nulls first). */
export function compareKeys(a: readonly Value[], b: readonly Value[]): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? null;
    const y = b[i] ?? null;
    if (x === null || y === null) {
      if (x === y) continue;
      return x === null ? -1 : 1;
    }
    const c = compareValues(x, y);
    if (c !== 0) return c;
  }
  return 0;
}

/**
 * Merges records already sorted with {@link sortRecords}, one output row per surviving key.
 * `isNull(record, column)` tells partial update whether a column of a record is null; `columns`
 * is the number of output columns.
 */
export function mergeSorted(
  sorted: readonly KeyValueRecord[],
  options: MergeEngineOptions,
  columns = 0,
  isNull: (record: KeyValueRecord, column: number) => boolean = () => false,
): MergedRow[] {
  if (options.engine === 'aggregation') {
    throw new TypeError('mergeSorted cannot aggregate; use aggregateSorted for the aggregation engine');
  }
  const out: MergedRow[] = [];
  forEachKey(sorted, (start, end) => {
    const merged = mergeKey(sorted, start, end, options, columns, isNull);
    if (merged) out.push(merged);
  });
  return out;
}

function forEachKey(sorted: readonly KeyValueRecord[], each: (start: number, end: number) => void): void {
  let start = 0;
  while (start < sorted.length) {
    let end = start + 1;
    while (end < sorted.length && compareKeys(sorted[start]!.key, sorted[end]!.key) === 0) end++;
    each(start, end);
    start = end;
  }
}

/**
 * The aggregation engine over records already sorted with {@link sortRecords}: one row per key
 * with a cell per column. `columns` are the aggregations of the read columns, in output order;
 * `input` reads their values. A key stays even when all its values were retracted (Java emits
 * an INSERT); it is removed only by a -D with `aggregation.remove-record-on-delete`.
 */
export function aggregateSorted(
  sorted: readonly KeyValueRecord[],
  options: MergeEngineOptions,
  columns: readonly FieldAggregation[],
  input: AggregationInput,
): MergedRow[] {
  const aggregators = columns.map((spec, c) => createAggregator(spec, c, input));
  const keyOptions = {
    removeRecordOnDelete: options.removeRecordOnDelete,
    ignoreDelete: options.ignoreDelete,
    notNull: columns.map((c) => !c.type.nullable),
  };
  const out: MergedRow[] = [];
  forEachKey(sorted, (start, end) => {
    const group = sorted.slice(start, end);
    const cells = aggregateKey(group, aggregators, keyOptions, isRetraction, ROW_KIND_DELETE);
    if (cells) out.push({ record: group[group.length - 1]!, cells });
  });
  return out;
}

function mergeKey(
  records: readonly KeyValueRecord[],
  start: number,
  end: number,
  options: MergeEngineOptions,
  columns: number,
  isNull: (record: KeyValueRecord, column: number) => boolean,
): MergedRow | null {
  switch (options.engine) {
    case 'aggregation':
      throw new TypeError('unreachable: aggregation is merged by aggregateSorted');
    case 'deduplicate': {
      for (let i = end - 1; i >= start; i--) {
        const r = records[i]!;
        if (!isRetraction(r.kind)) return { record: r };
        if (!options.ignoreDelete) return null;
      }
      return null;
    }
    case 'first-row': {
      for (let i = start; i < end; i++) {
        const r = records[i]!;
        if (!isRetraction(r.kind)) return { record: r };
      }
      return null;
    }
    case 'partial-update': {
      let sources: KeyValueRecord[] | null = null;
      let last: KeyValueRecord | null = null;
      for (let i = start; i < end; i++) {
        const r = records[i]!;
        if (isRetraction(r.kind)) {
          if (options.ignoreDelete) continue;
          if (options.removeRecordOnDelete) {
            if (r.kind === ROW_KIND_DELETE) {
              sources = null;
              last = null;
            }
            continue;
          }
          throw new UnsupportedTableFeatureError(
            'partial-update table contains a retraction (-U/-D) record; set ignore-delete or partial-update.remove-record-on-delete',
          );
        }
        if (sources === null) sources = new Array<KeyValueRecord>(columns).fill(r);
        for (let c = 0; c < columns; c++) if (!isNull(r, c)) sources[c] = r;
        last = r;
      }
      return last === null ? null : { record: last, columnSources: sources ?? [] };
    }
  }
}
