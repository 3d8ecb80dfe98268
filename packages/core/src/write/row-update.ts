/**
 * The `SET` of an update: assignments checked against the table's columns, and rows read from the
 * table with those columns replaced, ready to be written again.
 */
import type * as arrow from 'apache-arrow';
import type { DataField } from '@tidemark/format';
import { makeBatch } from '../read/arrow-take.js';
import { buildColumn, conformData } from './arrow-columns.js';
import type { RowObject } from './table-write.js';
import { ConversionFailure, toInternal, type WriteValue } from './value-conversion.js';
import { WriteValidationError } from './write-errors.js';

/** Column index → new internal value. */
export type Assignments = ReadonlyMap<number, WriteValue>;

/**
 * Checks `set` (column name → new value, in the forms `append` accepts) against `fields`.
 *
 * @param refused columns that cannot be assigned, with the reason (e.g. primary-key columns).
 * @throws WriteValidationError naming the column for an unknown or refused column, a value of the
 *   wrong type, or NULL in a NOT NULL column; and for an empty `set`.
 */
export function parseAssignments(
  fields: readonly DataField[],
  set: RowObject,
  refused: ReadonlyMap<string, string> = new Map(),
): Assignments {
  if (set === null || typeof set !== 'object' || Array.isArray(set)) {
    throw new WriteValidationError(undefined, undefined, "update expects 'set' as an object { column: newValue }");
  }
  const out = new Map<number, WriteValue>();
  for (const [name, value] of Object.entries(set)) {
    const index = fields.findIndex((f) => f.name === name);
    if (index < 0) {
      throw new WriteValidationError(name, undefined, `no such column; the table has ${fields.map((f) => f.name).join(', ')}`);
    }
    const why = refused.get(name);
    if (why !== undefined) throw new WriteValidationError(name, undefined, why);
    const field = fields[index]!;
    let v: WriteValue;
    try {
      v = toInternal(field.type, value);
    } catch (e) {
      if (e instanceof ConversionFailure) throw new WriteValidationError(name, undefined, e.message);
      throw e;
    }
    if (v === null && field.type.nullable === false)
      throw new WriteValidationError(name, undefined, 'is NOT NULL and cannot be set to null');
    out.set(index, v);
  }
  if (out.size === 0) throw new WriteValidationError(undefined, undefined, "update needs at least one column in 'set'");
  return out;
}

/** `batches` (rows in the table's column order) with the assigned columns replaced by their new value. */
export function applyAssignments(
  batches: readonly arrow.RecordBatch[],
  fields: readonly DataField[],
  assignments: Assignments,
): arrow.RecordBatch[] {
  return batches.map((batch) => {
    const n = batch.numRows;
    const same = new Uint32Array(n);
    const columns = batch.data.children.map((data, i) => {
      if (!assignments.has(i)) return data;
      return conformData(buildColumn(fields[i]!.type, [assignments.get(i)!], same), data.type as arrow.DataType);
    });
    return makeBatch(batch.schema, columns, n);
  });
}
