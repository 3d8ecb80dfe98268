/**
 * Merge engines of primary-key tables (paimon-format.md §10.3), applied to the records of one key
 * ordered by sequence number. Pure logic over record references so it can be tested without files:
 * the reader decides where each output column's value comes from.
 */
import type { TableSchema, Value } from '@tidemark/format';
import { compareValues } from '../predicate.js';
import { UnsupportedTableFeatureError } from '../scan/errors.js';

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
}

/** Merge engine settings from the table options. */
export interface MergeEngineOptions {
  readonly engine: 'deduplicate' | 'first-row' | 'partial-update';
  /** Option `ignore-delete`: retractions are skipped. */
  readonly ignoreDelete: boolean;
  /** Option `partial-update.remove-record-on-delete`. */
  readonly removeRecordOnDelete: boolean;
}

/**
 * Reads the merge engine settings of a primary-key table.
 *
 * @throws UnsupportedTableFeatureError for `aggregation`, partial-update sequence groups, or an unknown engine.
 */
export function mergeEngineOptions(schema: TableSchema): MergeEngineOptions {
  const o = schema.options;
  const engine = (o['merge-engine'] ?? 'deduplicate').toLowerCase();
  const flag = (k: string): boolean => (o[k] ?? 'false').toLowerCase() === 'true';
  const ignoreDelete =
    flag('ignore-delete') || flag('first-row.ignore-delete') || flag('deduplicate.ignore-delete') || flag('partial-update.ignore-delete');
  if (engine !== 'deduplicate' && engine !== 'first-row' && engine !== 'partial-update') {
    throw new UnsupportedTableFeatureError(
      `merge engine '${engine}' is not supported for reading (supported: deduplicate, first-row, partial-update)`,
    );
  }
  if (engine === 'partial-update' && Object.keys(o).some((k) => k.startsWith('fields.') && (k.endsWith('.sequence-group') || k.endsWith('.aggregate-function')))) {
    throw new UnsupportedTableFeatureError('partial-update with sequence groups or aggregate functions is not supported for reading');
  }
  if (o['sequence.field'] !== undefined) {
    throw new UnsupportedTableFeatureError(`option 'sequence.field' is not supported for reading`);
  }
  return { engine, ignoreDelete, removeRecordOnDelete: flag('partial-update.remove-record-on-delete') };
}

/** Orders records by key, then sequence number; ties keep their input order (stable sort). */
export function sortRecords(records: KeyValueRecord[]): KeyValueRecord[] {
  return records.sort((a, b) => compareKeys(a.key, b.key) || (a.sequence < b.sequence ? -1 : a.sequence > b.sequence ? 1 : 0));
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
  const out: MergedRow[] = [];
  let start = 0;
  while (start < sorted.length) {
    let end = start + 1;
    while (end < sorted.length && compareKeys(sorted[start]!.key, sorted[end]!.key) === 0) end++;
    const merged = mergeKey(sorted, start, end, options, columns, isNull);
    if (merged) out.push(merged);
    start = end;
  }
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
