/**
 * `Table.delete`: on a primary-key table the keys (or the rows matching a predicate) found in the
 * latest snapshot are written as `-D` records carrying their current values, as Java's DELETE
 * does; on an append table with deletion vectors the matching rows are marked deleted.
 */
import * as arrow from 'apache-arrow';
import { toArrowSchema } from '@tidemark/format';
import { deleteFromAppendTable } from '../deletion-vectors/append-delete.js';
import { parsePredicate } from '../predicate-parser.js';
import { makeBatch } from '../read/arrow-take.js';
import { mergeEngineOptions } from '../read/merge-engine.js';
import type { RowObject } from '../write/table-write.js';
import { NotSupportedError, WriteValidationError } from '../write/write-errors.js';
import { findKeys, findRows, keyLookup } from './key-lookup.js';
import { commitClearing, writeAndCommit } from './one-shot-write.js';
import {
  appendDeleteOptions,
  dryRunSkipped,
  emptyDvPlan,
  primaryKeyPlan,
  type DeleteOptions,
  type RowChange,
  type RowChangeTable,
} from './row-change-table.js';

/** The internal row kind column of the -D rows a delete writes (never a table column name Paimon allows). */
const DELETE_KIND_FIELD = '__tidemark_row_kind__';

/** What to delete: key objects, or a predicate. */
export type DeleteTarget = readonly RowObject[] | { readonly where: string };

/** Deletes the keys or the rows matching a predicate (see `Table.delete`). */
export async function deleteRows(table: RowChangeTable, keysOrWhere: DeleteTarget, options: DeleteOptions): Promise<RowChange> {
  const schema = table.context.schema;
  if (schema.primaryKeys.length === 0) return deleteAppendRows(table, keysOrWhere, options);
  const merge = mergeEngineOptions(schema);
  if (merge.engine === 'first-row') throw new NotSupportedError('merge engine first-row ignores deletes: rows cannot be deleted');
  if ((merge.engine === 'partial-update' || merge.engine === 'aggregation') && !merge.removeRecordOnDelete) {
    throw new NotSupportedError(
      `merge engine ${merge.engine} keeps a row on delete unless '${merge.engine === 'aggregation' ? 'aggregation' : 'partial-update'}.remove-record-on-delete' = 'true'`,
    );
  }
  if (merge.ignoreDelete) throw new NotSupportedError("the table option 'ignore-delete' = 'true' drops deletes");
  let lookup: (snapshotId: number) => Promise<arrow.RecordBatch[]>;
  if (Array.isArray(keysOrWhere)) {
    const keys = keyLookup(table, keysOrWhere as readonly RowObject[]);
    lookup = (snapshotId) => findKeys(table, keys, snapshotId, options.onProgress);
  } else {
    const where = (keysOrWhere as { where?: unknown }).where;
    if (typeof where !== 'string')
      throw new WriteValidationError(undefined, undefined, "delete expects an array of keys or { where: '<predicate>' }");
    parsePredicate(where, schema.fields);
    lookup = (snapshotId) => findRows(table, snapshotId, where, options.onProgress);
  }
  const skippedDryRun = await dryRunSkipped(table, options);
  if (skippedDryRun) return { deleted: 0, result: skippedDryRun, plan: primaryKeyPlan(table, null, []), dryRun: true };
  const snapshotId = await table.snapshotManager.latestId();
  const found = snapshotId === null ? [] : await lookup(snapshotId);
  const plan = primaryKeyPlan(table, snapshotId, found);
  const matched = plan.rowsMatched;
  if (options.dryRun) return { deleted: 0, result: null, plan, dryRun: true };
  const input = matched === 0 ? new arrow.Table(toArrowSchema(schema.fields)) : withRowKind(found, DELETE_KIND_FIELD, '-D');
  if (matched > 0) options.onProgress?.({ phase: 'writing', done: 0, unit: 'files' });
  const result = await writeAndCommit(table, input, { ...options, rowKindField: DELETE_KIND_FIELD }, (commit, committable, record) => {
    options.onProgress?.({ phase: 'committing', done: 0, unit: 'files' });
    return commitClearing(commit, committable, record);
  });
  return { deleted: result.status === 'committed' ? matched : 0, result, plan, dryRun: false };
}

/** Append tables: rows matching `{ where }` are marked in deletion vectors. */
async function deleteAppendRows(table: RowChangeTable, keysOrWhere: DeleteTarget, options: DeleteOptions): Promise<RowChange> {
  if (!table.context.options.deletionVectorsEnabled) {
    throw new NotSupportedError(
      `${table.location} is an append table without deletion vectors: rows can be deleted only with the table option ` +
        "'deletion-vectors.enabled' = 'true' (set it with ALTER TABLE / 'tidemark alter'), or rewrite the partitions with an overwrite",
    );
  }
  const where = Array.isArray(keysOrWhere) ? undefined : (keysOrWhere as { where?: unknown }).where;
  if (typeof where !== 'string') {
    throw new WriteValidationError(
      undefined,
      undefined,
      "rows of an append table are deleted by predicate: delete({ where: '<predicate>' })",
    );
  }
  const predicate = parsePredicate(where, table.context.schema.fields);
  const skippedDryRun = await dryRunSkipped(table, options);
  if (skippedDryRun) return { deleted: 0, result: skippedDryRun, plan: emptyDvPlan(), dryRun: true };
  const { deleted, result, plan } = await deleteFromAppendTable(table, predicate, appendDeleteOptions(options));
  return { deleted, result, plan, dryRun: options.dryRun === true };
}

/** Batches of table columns plus a Utf8 column `field` holding `kind` in every row. */
function withRowKind(batches: readonly arrow.RecordBatch[], field: string, kind: string): arrow.Table {
  const out = batches.map((b) => {
    const kinds = arrow.vectorFromArray(new Array<string>(b.numRows).fill(kind), new arrow.Utf8());
    const schema = new arrow.Schema([...b.schema.fields, new arrow.Field(field, new arrow.Utf8(), false)]);
    return makeBatch(schema, [...b.data.children, kinds.data[0]!], b.numRows);
  });
  return new arrow.Table(out);
}
