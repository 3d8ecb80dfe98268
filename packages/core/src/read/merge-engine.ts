/**
 * Merge engines of primary-key tables, applied to the records of one key ordered by
 * `sequence.field` values (when set), then sequence number. The aggregation engine's field
 * functions live in `aggregate-functions.ts`.
 *
 * One implementation serves reads and writes: {@link KeyMerger} computes what Java's
 * `MergeFunction.getResult()` returns for a key (a row and its row kind; a -D result keeps
 * deleting older data when written to a file), and reads drop results whose kind is -U/-D.
 * Pure logic over record references so it can be tested without files: the caller decides where
 * each column's value comes from.
 */
import type { DataType, TableSchema } from '@tidemark/format';
import { coreOptions } from '../core-options.js';
import { compareKeyValues, compareKeys } from '../key-order.js';
import { UnsupportedTableFeatureError } from '../scan/errors.js';
import {
  aggregateKey,
  createAggregator,
  fieldAggregations,
  type AggregatedCell,
  type AggregationInput,
  type FieldAggregation,
} from './aggregate-functions.js';
import type { KeyValueRecord } from './key-value-record.js';

/** Key comparison lives in key-order.ts; re-exported for the modules that import it from here. */
export { compareKeys };

/** `_VALUE_KIND` values. */
export const ROW_KIND_INSERT = 0;
export const ROW_KIND_UPDATE_BEFORE = 1;
export const ROW_KIND_UPDATE_AFTER = 2;
export const ROW_KIND_DELETE = 3;

/** True for -U and -D rows (retractions). */
export function isRetraction(kind: number): boolean {
  return kind === ROW_KIND_UPDATE_BEFORE || kind === ROW_KIND_DELETE;
}

export type { KeyValueRecord } from './key-value-record.js';

/**
 * The merged row of one key: a record for all columns, or one source per column (null = the
 * column is NULL), or aggregated cells. `kind` and `sequence` are what a writer stores.
 */
export interface MergedRow {
  /** The record the key comes from (the last one merged). */
  readonly record: KeyValueRecord;
  /** Row kind of the result: reads drop -U/-D results, writers keep them. */
  readonly kind: number;
  /** Sequence number of the result (Java: the latest merged record's). */
  readonly sequence: bigint;
  /** Partial update: where each column's value comes from (same order as the merged columns). */
  readonly columnSources?: readonly (KeyValueRecord | null)[];
  /** Aggregation: the merged cell of each column (same order as the merged columns). */
  readonly cells?: readonly AggregatedCell[];
}

/** A partial-update sequence group: `fields.<sequenceFields>.sequence-group` = `<fields>`. */
export interface SequenceGroup {
  readonly sequenceFields: readonly string[];
  readonly fields: readonly string[];
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
  /** Option `sequence.field.sort-order` = `descending`: the larger sequence field value is older. */
  readonly sequenceDescending?: boolean;
  /** Aggregation engine: the function of every table field, by field name. */
  readonly aggregations?: ReadonlyMap<string, FieldAggregation>;
  /** Partial update: the `fields.<f>.sequence-group` options. */
  readonly sequenceGroups?: readonly SequenceGroup[];
  /** Partial update: `partial-update.remove-record-on-sequence-group` (sequence fields whose -D removes the row). */
  readonly removeRecordOnSequenceGroup?: readonly string[];
}

/** The columns a merge reads and produces, with access to the records' values. */
export interface MergeColumns {
  /** Column names (needed for sequence groups and aggregation). */
  readonly names: readonly string[];
  readonly types: readonly DataType[];
  readonly input: AggregationInput;
}

/**
 * Reads the merge engine settings of a primary-key table.
 *
 * @throws UnsupportedTableFeatureError for unsupported aggregate functions, aggregate functions
 *   with partial-update, sequence groups with another engine, or an unknown engine.
 */
export function mergeEngineOptions(schema: TableSchema): MergeEngineOptions {
  const o = coreOptions(schema);
  const engine = o.mergeEngine;
  if (engine !== 'deduplicate' && engine !== 'first-row' && engine !== 'partial-update' && engine !== 'aggregation') {
    throw new UnsupportedTableFeatureError(
      `merge engine '${engine}' is not supported (supported: deduplicate, first-row, partial-update, aggregation)`,
    );
  }
  const ignoreDelete = o.ignoreDelete;
  const groupKeys = o.sequenceGroupKeys;
  if (engine !== 'partial-update' && groupKeys.length > 0) {
    throw new UnsupportedTableFeatureError(
      `${engine} with sequence groups ('${groupKeys[0]}') is not supported (only partial-update has them)`,
    );
  }
  const partialAgg =
    o.aggregateFunctionKeys[0] ?? (o.fieldsDefaultAggregateFunction !== null ? 'fields.default-aggregate-function' : undefined);
  if (engine === 'partial-update' && partialAgg !== undefined) {
    throw new UnsupportedTableFeatureError(`partial-update with aggregate functions ('${partialAgg}') is not supported`);
  }
  const sequenceFields = parseSequenceFields(schema, engine);
  const removeRecordOnDelete = engine === 'aggregation' ? o.aggregationRemoveRecordOnDelete : o.partialUpdateRemoveRecordOnDelete;
  const sequenceGroups = groupKeys.map((k) => parseSequenceGroup(schema, k));
  const seen = new Set<string>();
  for (const g of sequenceGroups) {
    for (const f of [...g.fields, ...g.sequenceFields]) {
      if (seen.has(f)) throw new UnsupportedTableFeatureError(`field '${f}' is defined repeatedly by multiple sequence groups`);
      seen.add(f);
    }
  }
  if (sequenceGroups.length > 0 && removeRecordOnDelete) {
    throw new UnsupportedTableFeatureError(
      "options 'fields.<f>.sequence-group' and 'partial-update.remove-record-on-delete' conflict; set only one",
    );
  }
  const removeRecordOnSequenceGroup = o.partialUpdateRemoveRecordOnSequenceGroup;
  for (const f of removeRecordOnSequenceGroup) {
    if (!sequenceGroups.some((g) => g.sequenceFields.includes(f))) {
      throw new UnsupportedTableFeatureError(
        `field '${f}' of option 'partial-update.remove-record-on-sequence-group' must be the sequence field of a sequence group`,
      );
    }
  }
  if (ignoreDelete && (removeRecordOnDelete || removeRecordOnSequenceGroup.length > 0)) {
    throw new UnsupportedTableFeatureError(
      "option 'ignore-delete' conflicts with 'partial-update.remove-record-on-delete' / '-on-sequence-group'; set only one",
    );
  }
  const order = o.sequenceFieldSortOrder;
  return {
    engine,
    ignoreDelete,
    removeRecordOnDelete,
    ...(sequenceFields.length > 0 ? { sequenceFields } : {}),
    ...(sequenceFields.length > 0 && order === 'descending' ? { sequenceDescending: true } : {}),
    ...(engine === 'aggregation' ? { aggregations: fieldAggregations(schema, sequenceFields) } : {}),
    ...(sequenceGroups.length > 0 ? { sequenceGroups } : {}),
    ...(removeRecordOnSequenceGroup.length > 0 ? { removeRecordOnSequenceGroup } : {}),
  };
}

function parseSequenceGroup(schema: TableSchema, key: string): SequenceGroup {
  const names = (list: string): string[] =>
    list
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  const sequenceFields = names(key.slice('fields.'.length, key.length - '.sequence-group'.length));
  const fields = names(coreOptions(schema).get(key) ?? '');
  for (const n of [...sequenceFields, ...fields]) {
    if (!schema.fields.some((f) => f.name === n)) {
      throw new UnsupportedTableFeatureError(`option '${key}' names '${n}', which is not a column of the table (schema ${schema.id})`);
    }
  }
  return { sequenceFields, fields };
}

function parseSequenceFields(schema: TableSchema, engine: string): string[] {
  const o = coreOptions(schema);
  const names = o.sequenceField;
  if (names.length === 0) return [];
  if (engine === 'first-row') {
    throw new UnsupportedTableFeatureError(`option 'sequence.field' is not supported with merge engine first-row`);
  }
  for (const n of names) {
    if (!schema.fields.some((f) => f.name === n)) {
      throw new UnsupportedTableFeatureError(`sequence.field names '${n}', which is not a column of the table (schema ${schema.id})`);
    }
  }
  return [...names];
}

/**
 * Orders records by key, then `sequence.field` values (when present), then sequence number; ties
 * keep their input order (stable sort). Null sequence-field values sort first in both orders; a
 * descending sort order reverses only the comparison of two non-null values, as Java's generated
 * comparator does. Keys and sequence fields compare in Java's order (key-order.ts).
 */
export function sortRecords(records: KeyValueRecord[], options?: Pick<MergeEngineOptions, 'sequenceDescending'>): KeyValueRecord[] {
  const sign = options?.sequenceDescending ? -1 : 1;
  return records.sort(
    (a, b) =>
      compareKeys(a.key, b.key) ||
      (a.userSequence && b.userSequence ? compareKeys(a.userSequence, b.userSequence, sign) : 0) ||
      (a.sequence < b.sequence ? -1 : a.sequence > b.sequence ? 1 : 0),
  );
}

/** Calls `each(start, end)` for every run of records with equal keys. */
export function forEachKey(sorted: readonly KeyValueRecord[], each: (start: number, end: number) => void): void {
  let start = 0;
  while (start < sorted.length) {
    let end = start + 1;
    while (end < sorted.length && compareKeys(sorted[start]!.key, sorted[end]!.key) === 0) end++;
    each(start, end);
    start = end;
  }
}

/** The row a partial-update merge builds: each column's source record (null: NULL). */
interface PartialRow {
  row: (KeyValueRecord | null)[];
  /** The NOT NULL columns were taken from a record (Java's initRow on the first retraction). */
  notNullFilled: boolean;
  /** An insert or update record was merged (else the result is a retraction). */
  meetInsert: boolean;
  /** The last record removed the row (remove-record-on-delete, or on a group's sequence field). */
  deleted: boolean;
  sequence: bigint | null;
}

/**
 * Merges the records of one key as Java's merge functions do (`getResult()` after `add()` of
 * each record in merge order). Create one per merge (it caches the column layout).
 */
export class KeyMerger {
  private readonly aggregators: ReturnType<typeof createAggregator>[] = [];
  private readonly notNull: boolean[];
  /** Partial update with sequence groups: group index of each column (-1 = none). */
  private readonly groupOf: number[] = [];
  /** Column indices of each group's sequence fields. */
  private readonly groupSeq: number[][] = [];
  private readonly removeOnGroupSeq = new Set<number>();

  constructor(
    private readonly options: MergeEngineOptions,
    private readonly columns: MergeColumns,
  ) {
    this.notNull = columns.types.map((t) => !t.nullable);
    if (options.engine === 'aggregation') {
      this.aggregators = columns.names.map((name, c) => {
        const spec = options.aggregations?.get(name);
        if (!spec) throw new TypeError(`no aggregate function resolved for column '${name}'`);
        return createAggregator(spec, c, columns.input);
      });
    }
    const groups = options.engine === 'partial-update' ? (options.sequenceGroups ?? []) : [];
    if (groups.length > 0) {
      const index = (n: string): number => columns.names.indexOf(n);
      this.groupOf = columns.names.map(() => -1);
      groups.forEach((g, gi) => {
        const seq = g.sequenceFields.map(index);
        const present = [...g.fields, ...g.sequenceFields].filter((f) => index(f) >= 0);
        if (present.length === 0) return;
        if (seq.some((i) => i < 0))
          throw new TypeError(`sequence group of ${g.sequenceFields.join(',')} merged without its sequence fields`);
        this.groupSeq[gi] = seq;
        for (const f of present) this.groupOf[index(f)] = gi;
        for (const f of options.removeRecordOnSequenceGroup ?? []) if (g.sequenceFields.includes(f)) this.removeOnGroupSeq.add(index(f));
      });
    }
  }

  /**
   * The merged row of `records[start, end)` (one key, merge order), or null when nothing is left.
   * A key with a single record yields that record unchanged, row kind included, as Java's
   * `ReducerMergeFunctionWrapper` does on reads, in the write buffer and in compaction.
   */
  merge(records: readonly KeyValueRecord[], start: number, end: number): MergedRow | null {
    if (end - start === 1) {
      const r = records[start]!;
      return isRetraction(r.kind) && this.options.ignoreDelete ? null : { record: r, kind: r.kind, sequence: r.sequence };
    }
    switch (this.options.engine) {
      case 'deduplicate': {
        for (let i = end - 1; i >= start; i--) {
          const r = records[i]!;
          if (!isRetraction(r.kind) || !this.options.ignoreDelete) return { record: r, kind: r.kind, sequence: r.sequence };
        }
        return null;
      }
      case 'first-row': {
        // Java refuses retractions here unless ignore-delete; writers check that on input, and
        // reads skip them so that a table written with ignore-delete later reads alike.
        for (let i = start; i < end; i++) {
          const r = records[i]!;
          if (!isRetraction(r.kind)) return { record: r, kind: r.kind, sequence: r.sequence };
        }
        return null;
      }
      case 'partial-update':
        return this.partial(records, start, end);
      case 'aggregation': {
        const group = records.slice(start, end);
        const out = aggregateKey(
          group,
          this.aggregators,
          {
            removeRecordOnDelete: this.options.removeRecordOnDelete,
            ignoreDelete: this.options.ignoreDelete,
            notNull: this.notNull,
          },
          isRetraction,
          ROW_KIND_DELETE,
        );
        if (out === null) return null;
        const last = out.last;
        return { record: last, kind: out.deleted ? ROW_KIND_DELETE : ROW_KIND_INSERT, sequence: last.sequence, cells: out.cells };
      }
    }
  }

  private isNull(r: KeyValueRecord, c: number): boolean {
    return this.columns.input.isNull(r, c);
  }

  /** Java's initRow: a fresh row holding only the NOT NULL columns of `r`. */
  private initRow(r: KeyValueRecord): (KeyValueRecord | null)[] {
    return this.notNull.map((nn) => (nn ? r : null));
  }

  /**
   * Partial update: every record fills the columns it has (with sequence groups, a group's columns
   * only when its sequence fields are not older), retractions as the options say.
   */
  private partial(records: readonly KeyValueRecord[], start: number, end: number): MergedRow | null {
    const state: PartialRow = {
      row: new Array<KeyValueRecord | null>(this.columns.names.length).fill(null),
      notNullFilled: false,
      meetInsert: false,
      deleted: false,
      sequence: null,
    };
    let last: KeyValueRecord | null = null;
    for (let i = start; i < end; i++) {
      const r = records[i]!;
      last = r;
      state.deleted = false;
      const retract = isRetraction(r.kind);
      if (retract) {
        if (!state.notNullFilled) {
          state.row = state.row.map((s, c) => (this.notNull[c] ? r : s));
          state.notNullFilled = true;
        }
        if (this.options.ignoreDelete) continue;
      }
      state.sequence = r.sequence;
      if (this.groupOf.length > 0) this.applyWithGroups(state, r, retract);
      else if (retract) this.applyRetraction(state, r);
      else for (let c = 0; c < state.row.length; c++) if (!this.isNull(r, c)) state.row[c] = r;
      if (!retract) {
        state.meetInsert = true;
        state.notNullFilled = true;
      }
    }
    if (last === null) return null;
    return {
      record: last,
      kind: state.deleted || !state.meetInsert ? ROW_KIND_DELETE : ROW_KIND_INSERT,
      sequence: state.sequence ?? 0n,
      columnSources: state.row,
    };
  }

  /** A retraction without sequence groups: only `partial-update.remove-record-on-delete` accepts one. */
  private applyRetraction(state: PartialRow, r: KeyValueRecord): void {
    if (!this.options.removeRecordOnDelete) {
      throw new UnsupportedTableFeatureError(
        'partial-update cannot merge a retraction (-U/-D) record; set ignore-delete, partial-update.remove-record-on-delete or sequence groups',
      );
    }
    if (r.kind === ROW_KIND_DELETE) {
      state.deleted = true;
      state.row = this.initRow(r);
    }
  }

  /** Compares the sequence fields of group `g` in `r` with those of the current row (nulls first). */
  private compareGroup(g: number, r: KeyValueRecord, row: readonly (KeyValueRecord | null)[]): number {
    const input = this.columns.input;
    for (const c of this.groupSeq[g]!) {
      const x = input.isNull(r, c) ? null : input.value(r, c);
      const src = row[c] ?? null;
      const y = src === null || input.isNull(src, c) ? null : input.value(src, c);
      if (x === null || y === null) {
        if (x === y) continue;
        return x === null ? -1 : 1;
      }
      const cmp = compareKeyValues(x, y);
      if (cmp !== 0) return cmp;
    }
    return 0;
  }

  /** One record under sequence groups: each group takes the record's columns unless its sequence is older. */
  private applyWithGroups(state: PartialRow, r: KeyValueRecord, retract: boolean): void {
    const n = state.row.length;
    const emptyGroup = (g: number): boolean => this.groupSeq[g]!.every((c) => this.isNull(r, c));
    const processed = new Array<boolean>(n).fill(false);
    const updatedSeq = new Set<number>();
    for (let c = 0; c < n; c++) {
      const g = this.groupOf[c]!;
      if (g < 0) {
        if (!retract && !this.isNull(r, c)) state.row[c] = r;
        continue;
      }
      if (processed[c]) continue;
      const seq = this.groupSeq[g]!;
      if (emptyGroup(g)) {
        for (const s of seq) processed[s] = true;
        continue;
      }
      if (this.compareGroup(g, r, state.row) < 0) continue;
      if (seq.includes(c)) {
        for (const s of seq) {
          if (retract && !updatedSeq.has(s) && r.kind === ROW_KIND_DELETE && this.removeOnGroupSeq.has(s)) {
            state.deleted = true;
            state.row = this.initRow(r);
            return;
          }
          state.row[s] = r;
          updatedSeq.add(s);
          processed[s] = true;
        }
        continue;
      }
      // A retraction sets the group's fields to NULL; an insert takes its values, nulls included.
      state.row[c] = retract ? null : r;
    }
  }
}

/** Columns given only by count and a null test (deduplicate, first-row, partial-update without groups). */
function anonymousColumns(count: number, isNull: (record: KeyValueRecord, column: number) => boolean): MergeColumns {
  return {
    names: Array.from({ length: count }, (_, c) => `#${c}`),
    types: Array.from({ length: count }, () => ({ root: 'INT', nullable: true }) as DataType),
    input: {
      isNull,
      value: () => {
        throw new TypeError('column values are not available to this merge');
      },
      elements: () => [],
    },
  };
}

/**
 * Merges records already sorted with {@link sortRecords}. With `keepRetractions` (writers,
 * compaction into a level that older data may lie below) every key's result is returned with its
 * row kind; otherwise (reads) results of kind -U/-D are dropped.
 */
export function mergeRecords(
  sorted: readonly KeyValueRecord[],
  options: MergeEngineOptions,
  columns: MergeColumns,
  keepRetractions = false,
): MergedRow[] {
  const merger = new KeyMerger(options, columns);
  const out: MergedRow[] = [];
  forEachKey(sorted, (start, end) => {
    const merged = merger.merge(sorted, start, end);
    if (merged && (keepRetractions || !isRetraction(merged.kind))) out.push(merged);
  });
  return out;
}

/**
 * Merges records already sorted with {@link sortRecords}, one output row per surviving key (a
 * read). `isNull(record, column)` tells partial update whether a column of a record is null;
 * `columns` is the number of output columns. Sequence groups and aggregation need column names
 * and values: use {@link mergeRecords}.
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
  return mergeRecords(sorted, options, anonymousColumns(columns, isNull));
}

/**
 * The aggregation engine over records already sorted with {@link sortRecords} (a read): one row
 * per key with a cell per column. `columns` are the aggregations of the read columns, in output
 * order; `input` reads their values. A key stays even when all its values were retracted (Java
 * emits an INSERT); it is removed only by a -D with `aggregation.remove-record-on-delete`.
 */
export function aggregateSorted(
  sorted: readonly KeyValueRecord[],
  options: MergeEngineOptions,
  columns: readonly FieldAggregation[],
  input: AggregationInput,
): MergedRow[] {
  const aggregations = new Map(columns.map((c) => [c.field, c]));
  return mergeRecords(
    sorted,
    { ...options, aggregations },
    { names: columns.map((c) => c.field), types: columns.map((c) => c.type), input },
  );
}
