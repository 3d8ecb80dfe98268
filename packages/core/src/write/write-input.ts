/**
 * Input conversion of the table writer: row objects and Arrow batches become batches in the
 * table's Arrow schema (plus `_VALUE_KIND` on primary-key tables), validated as a whole before
 * anything is buffered, so a write takes all of its rows or none.
 */
import * as arrow from 'apache-arrow';
import { typeToString, type TableSchema } from '@tidemark/format';
import { NON_RETRACTABLE_FUNCTIONS } from '../read/aggregate-functions.js';
import { isRetraction, ROW_KIND_INSERT, ROW_KIND_UPDATE_BEFORE, type MergeEngineOptions } from '../read/merge-engine.js';
import { buildColumn, conformData, isValidAt } from './arrow-columns.js';
import { parseRowKind } from './key-value/row-kind.js';
import type { RowObject, WriteInput } from './table-write-options.js';
import { ConversionFailure, toInternal, type WriteValue } from './value-conversion.js';
import { WriteValidationError } from './write-errors.js';

/** Turns {@link WriteInput} into validated batches of one table schema. */
export class WriteInputConverter {
  private readonly isPk: boolean;

  /**
   * @param arrowSchema the table columns as Arrow fields
   * @param batchSchema the schema of the batches made: the table columns, plus `_VALUE_KIND` (Int8) on primary-key tables
   * @param merge the merge engine settings (primary-key tables), which decide the row kinds accepted
   * @param rowKindField the input field holding each row's kind (`TableWriteOptions.rowKindField`)
   */
  constructor(
    private readonly schema: TableSchema,
    private readonly arrowSchema: arrow.Schema,
    private readonly batchSchema: arrow.Schema,
    private readonly merge: MergeEngineOptions | null,
    private readonly rowKindField: string | undefined,
  ) {
    this.isPk = merge !== null;
  }

  /** The batches of `input`, conformed to the table schema; throws before returning any when a row is bad. */
  toBatches(input: WriteInput): arrow.RecordBatch[] {
    if (input instanceof arrow.Table) return input.batches.map((b) => this.conformBatch(b));
    if (input instanceof arrow.RecordBatch) return [this.conformBatch(input)];
    return [this.rowsToBatch(input)];
  }

  private rowsToBatch(rows: readonly RowObject[]): arrow.RecordBatch {
    if (!Array.isArray(rows)) {
      throw new WriteValidationError(
        undefined,
        undefined,
        'write() expects an apache-arrow Table or RecordBatch, or an array of row objects',
      );
    }
    const fields = this.schema.fields;
    const names = new Set(fields.map((f) => f.name));
    const kindField = this.rowKindField;
    const kinds = this.isPk ? new Int8Array(rows.length) : null;
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r];
      if (row === null || typeof row !== 'object' || Array.isArray(row)) {
        throw new WriteValidationError(
          undefined,
          r,
          `expected a row object { column: value }, got ${row === null ? 'null' : Array.isArray(row) ? 'an array' : typeof row}`,
        );
      }
      for (const k in row) {
        if (!names.has(k) && k !== kindField)
          throw new WriteValidationError(k, r, `unknown column (table columns: ${fields.map((f) => f.name).join(', ')})`);
      }
      if (kinds !== null && kindField !== undefined) {
        const raw = row[kindField];
        kinds[r] = raw === undefined || raw === null ? ROW_KIND_INSERT : parseRowKind(raw as string, r, kindField);
      }
    }
    if (kinds !== null) this.checkKinds(kinds);
    const children = fields.map((field) => {
      const values = new Array<WriteValue>(rows.length);
      const type = field.type;
      for (let r = 0; r < rows.length; r++) {
        const raw = rows[r]![field.name];
        let v: WriteValue;
        try {
          v = toInternal(type, raw);
        } catch (e) {
          if (e instanceof ConversionFailure) {
            throw new WriteValidationError(
              e.subPath ? `${field.name}${e.subPath.startsWith('[') ? '' : '.'}${e.subPath}` : field.name,
              r,
              e.message,
            );
          }
          throw e;
        }
        if (v === null && !type.nullable) throw new WriteValidationError(field.name, r, 'NULL in a NOT NULL column');
        values[r] = v;
      }
      return buildColumn(type, values);
    });
    if (kinds !== null) children.push(arrow.makeData({ type: new arrow.Int8(), length: rows.length, nullCount: 0, data: kinds }));
    return this.makeBatch(children, rows.length);
  }

  /**
   * Refuses retractions the table's merge engine cannot merge, before anything is buffered (Java
   * fails later, while merging).
   */
  private checkKinds(kinds: Int8Array): void {
    const m = this.merge!;
    if (m.ignoreDelete) return;
    const first = kinds.findIndex((k) => isRetraction(k));
    if (first < 0) return;
    const field = this.rowKindField;
    if (m.engine === 'first-row') {
      throw new WriteValidationError(
        field,
        first,
        "merge engine first-row cannot take -U/-D rows; set 'ignore-delete' = 'true' to drop them",
      );
    }
    if (m.engine === 'partial-update' && !m.removeRecordOnDelete && !m.sequenceGroups) {
      throw new WriteValidationError(
        field,
        first,
        "merge engine partial-update cannot take -U/-D rows; set 'ignore-delete', 'partial-update.remove-record-on-delete' or sequence groups",
      );
    }
    if (m.engine === 'aggregation') {
      // Such a record would make every later merge of its key fail (reads included).
      const retracting = m.removeRecordOnDelete ? kinds.findIndex((k) => k === ROW_KIND_UPDATE_BEFORE) : first;
      if (retracting < 0) return;
      for (const spec of m.aggregations?.values() ?? []) {
        if (NON_RETRACTABLE_FUNCTIONS.has(spec.fn) && !spec.ignoreRetract) {
          throw new WriteValidationError(
            field,
            retracting,
            `aggregate function '${spec.fn}' of column '${spec.field}' cannot retract -U/-D rows; set 'fields.${spec.field}.ignore-retract' = 'true'` +
              (m.removeRecordOnDelete ? '' : " or, for -D, 'aggregation.remove-record-on-delete' = 'true'"),
          );
        }
      }
    }
  }

  private conformBatch(batch: arrow.RecordBatch): arrow.RecordBatch {
    const byName = new Map<string, number>();
    batch.schema.fields.forEach((f, i) => byName.set(f.name, i));
    const kindField = this.rowKindField;
    for (const f of batch.schema.fields) {
      if (f.name === kindField) continue;
      if (!this.schema.fields.some((x) => x.name === f.name)) {
        throw new WriteValidationError(
          f.name,
          undefined,
          `unknown column (table columns: ${this.schema.fields.map((x) => x.name).join(', ')})`,
        );
      }
    }
    const children = this.schema.fields.map((field, c) => {
      const target = this.arrowSchema.fields[c]!.type;
      const i = byName.get(field.name);
      if (i === undefined) {
        if (!field.type.nullable) throw new WriteValidationError(field.name, undefined, 'missing NOT NULL column');
        return buildColumn(field.type, new Array<WriteValue>(batch.numRows).fill(null));
      }
      const src = batch.data.children[i]!;
      let data: arrow.Data;
      try {
        data = conformData(src, target);
      } catch (e) {
        throw new WriteValidationError(
          field.name,
          undefined,
          `cannot write Arrow ${String(src.type)} as ${typeToString(field.type)}: ${(e as Error).message}`,
        );
      }
      if (!field.type.nullable && data.nullCount > 0) {
        let r = 0;
        while (r < data.length && isValidAt(data, r)) r++;
        throw new WriteValidationError(field.name, r, 'NULL in a NOT NULL column');
      }
      return data;
    });
    if (this.isPk) children.push(this.kindsOfBatch(batch, kindField === undefined ? undefined : byName.get(kindField)));
    return this.makeBatch(children, batch.numRows);
  }

  /** The `_VALUE_KIND` column of an Arrow input: parsed from its row kind column, else all `+I`. */
  private kindsOfBatch(batch: arrow.RecordBatch, column: number | undefined): arrow.Data {
    const n = batch.numRows;
    const kinds = new Int8Array(n);
    if (column !== undefined) {
      const field = this.rowKindField!;
      const data = batch.data.children[column]!;
      const utf8 = (t: arrow.DataType): boolean => arrow.DataType.isUtf8(t) || arrow.DataType.isLargeUtf8(t);
      if (!utf8(data.type) && !(arrow.DataType.isDictionary(data.type) && utf8(data.type.dictionary))) {
        throw new WriteValidationError(
          field,
          undefined,
          `the row kind column must be Utf8 ('+I', '-U', '+U', '-D'), got Arrow ${String(data.type)}`,
        );
      }
      const vector = batch.getChildAt(column)!;
      for (let r = 0; r < n; r++) {
        const v = vector.get(r) as string | null;
        kinds[r] = v === null ? ROW_KIND_INSERT : parseRowKind(v, r, field);
      }
      this.checkKinds(kinds);
    }
    return arrow.makeData({ type: new arrow.Int8(), length: n, nullCount: 0, data: kinds });
  }

  /** A batch of this writer's batch schema from its column data. */
  makeBatch(children: arrow.Data[], length: number): arrow.RecordBatch {
    const data = arrow.makeData({ type: new arrow.Struct(this.batchSchema.fields), length, nullCount: 0, children });
    return new arrow.RecordBatch(this.batchSchema, data);
  }
}
