/**
 * Whether an update of a primary-key table takes effect. The update writes each matched row back
 * with its new values; the merge engine then decides which record wins, and for some assignments
 * the old record keeps winning: a null on a partial-update table (nulls never overwrite), a lower
 * or null `sequence.field` value, a sequence group whose sequence fields would be lower or null.
 * Such an update would report rows as updated while nothing changes, so it is refused instead.
 */
import type * as arrow from 'apache-arrow';
import { partitionValueStrings, type DataField, type Value } from '@tidemark/format';
import { valueReader } from '../read/arrow-values.js';
import { compareKeys, type MergeEngineOptions } from '../read/merge-engine.js';
import type { Assignments } from './row-update.js';
import { WriteValidationError } from './write-errors.js';

/**
 * Refuses assignments the engine ignores whatever the rows hold: a null for a partial-update
 * column outside every sequence group.
 *
 * @throws WriteValidationError naming the column and the reason.
 */
export function refuseIgnoredAssignments(fields: readonly DataField[], merge: MergeEngineOptions, assignments: Assignments): void {
  if (merge.engine !== 'partial-update') return;
  const grouped = new Set((merge.sequenceGroups ?? []).flatMap((g) => [...g.fields, ...g.sequenceFields]));
  for (const [index, value] of assignments) {
    const name = fields[index]!.name;
    if (value !== null || grouped.has(name) || merge.sequenceFields?.includes(name)) continue;
    throw new WriteValidationError(
      name,
      undefined,
      'cannot be set to null: merge engine partial-update never overwrites a value with null, so the update would change nothing ' +
        "(columns of a sequence group, 'fields.<sequence field>.sequence-group', take nulls)",
    );
  }
}

/**
 * Refuses an update whose new records would lose to the old ones for some matched row: a
 * `sequence.field` value lower (or, descending, higher) than the row's, or null where the row's is
 * not; on partial-update, an assigned column of a sequence group whose sequence fields would be
 * null or lower than the row's.
 *
 * @param before the matched rows (all columns, table order); `after` the same rows as written.
 * @throws WriteValidationError naming the column, the row's primary key and the values.
 */
export function refuseIgnoredRows(
  fields: readonly DataField[],
  primaryKeys: readonly string[],
  merge: MergeEngineOptions,
  assignments: Assignments,
  before: readonly arrow.RecordBatch[],
  after: readonly arrow.RecordBatch[],
): void {
  const checks = [...sequenceFieldChecks(fields, merge, assignments), ...sequenceGroupChecks(fields, merge, assignments)];
  if (checks.length === 0) return;
  const keyColumns = primaryKeys.map((k) => fields.findIndex((f) => f.name === k));
  const reader = (batch: arrow.RecordBatch, c: number): ((i: number) => Value) => valueReader(batch.data.children[c]!, fields[c]!.type);
  before.forEach((old, b) => {
    const now = after[b]!;
    const keyOf = keyColumns.map((c) => reader(old, c));
    for (const check of checks) {
      const oldSeq = check.columns.map((c) => reader(old, c));
      const newSeq = check.columns.map((c) => reader(now, c));
      for (let i = 0; i < old.numRows; i++) {
        const why = check.ignored(
          oldSeq.map((read) => read(i)),
          newSeq.map((read) => read(i)),
        );
        if (why === null) continue;
        const key = keyColumns.map((c, j) => `${fields[c]!.name}=${display(fields[c]!, keyOf[j]!(i))}`).join(', ');
        throw new WriteValidationError(check.column, undefined, `in the row with ${key}, ${why}, so the update would change nothing`);
      }
    }
  });
}

/** One rule: the sequence columns it compares, the column it names, and why a row's new record loses (null: it wins). */
interface RowCheck {
  readonly column: string;
  readonly columns: readonly number[];
  ignored(was: readonly Value[], is: readonly Value[]): string | null;
}

function sequenceFieldChecks(fields: readonly DataField[], merge: MergeEngineOptions, assignments: Assignments): RowCheck[] {
  const names = merge.sequenceFields ?? [];
  const columns = names.map((n) => fields.findIndex((f) => f.name === n));
  const assigned = columns.find((c) => assignments.has(c));
  if (assigned === undefined) return [];
  const descending = merge.sequenceDescending === true;
  const option = `sequence.field '${names.join(',')}'${descending ? ' sorted descending' : ''}`;
  const shown = showValues(fields, columns);
  return [
    {
      column: fields[assigned]!.name,
      columns,
      ignored: (was, is) => {
        if (compareKeys(is, was, descending ? -1 : 1) >= 0) return null;
        if (is.some((v) => v === null)) {
          return `the new value ${shown(is)} sorts before the current ${shown(was)} (a null sequence value sorts first) and with ${option} the later record wins`;
        }
        return descending
          ? `the new value ${shown(is)} is higher than the current ${shown(was)} and with ${option} the record with the lower value wins`
          : `the new value ${shown(is)} is lower than the current ${shown(was)} and with ${option} the record with the higher value wins`;
      },
    },
  ];
}

function sequenceGroupChecks(fields: readonly DataField[], merge: MergeEngineOptions, assignments: Assignments): RowCheck[] {
  if (merge.engine !== 'partial-update') return [];
  const index = (name: string): number => fields.findIndex((f) => f.name === name);
  const out: RowCheck[] = [];
  for (const g of merge.sequenceGroups ?? []) {
    const assigned = [...g.sequenceFields, ...g.fields].map(index).find((c) => assignments.has(c));
    if (assigned === undefined) continue;
    const columns = g.sequenceFields.map(index);
    const seq = `sequence field '${g.sequenceFields.join(',')}'`;
    const group = `the sequence group of '${g.fields.join(',')}'`;
    const seqAssigned = columns.some((c) => assignments.has(c));
    const shown = showValues(fields, columns);
    out.push({
      column: fields[assigned]!.name,
      columns,
      ignored: (was, is) => {
        if (is.every((v) => v === null)) {
          return seqAssigned
            ? `${seq} would be null and a record without a sequence value never updates ${group}`
            : `${seq} is null and a record without a sequence value never updates ${group} (set '${g.sequenceFields[0]!}' too)`;
        }
        if (compareKeys(is, was) >= 0) return null;
        return `the new value ${shown(is)} of ${seq} is lower than the current ${shown(was)} and ${group} keeps the record with the higher value`;
      },
    });
  }
  return out;
}

/** Values of `columns`, as the user wrote them, comma-separated. */
function showValues(fields: readonly DataField[], columns: readonly number[]): (values: readonly Value[]) => string {
  return (values) => values.map((v, j) => display(fields[columns[j]!]!, v)).join(', ');
}

/** A value as the user wrote it (null as `null`). */
function display(field: DataField, v: Value): string {
  if (v === null) return 'null';
  try {
    const s = partitionValueStrings([field.name], [field.type], [v], { legacyName: false })[0]!;
    return field.type.root === 'VARCHAR' || field.type.root === 'CHAR' ? `'${s}'` : s;
  } catch {
    return String(v as unknown);
  }
}
