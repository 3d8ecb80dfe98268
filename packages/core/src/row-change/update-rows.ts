/**
 * `Table.update`: on a primary-key table the matching rows of the latest snapshot are written back
 * with their new values (upserts); on an append table with deletion vectors they are marked
 * deleted and their new versions written, in one snapshot.
 */
import * as arrow from 'apache-arrow';
import { deleteFromAppendTable } from '../deletion-vectors/append-delete.js';
import { parsePredicate } from '../predicate-parser.js';
import { mergeEngineOptions } from '../read/merge-engine.js';
import { applyAssignments, parseAssignments } from '../write/row-update.js';
import { refuseIgnoredAssignments, refuseIgnoredRows } from '../write/update-effect.js';
import { NotSupportedError, WriteValidationError } from '../write/write-errors.js';
import { findRows } from './key-lookup.js';
import { commitClearing, writeAndCommit, writeThen } from './one-shot-write.js';
import {
  appendDeleteOptions,
  dryRunSkipped,
  emptyDvPlan,
  primaryKeyPlan,
  type DeleteOptions,
  type RowChange,
  type RowChangeTable,
  type UpdateChange,
} from './row-change-table.js';

/** Sets columns of the rows matching `change.where` (see `Table.update`). */
export async function updateRows(table: RowChangeTable, change: UpdateChange, options: DeleteOptions): Promise<RowChange> {
  const schema = table.context.schema;
  if (change === null || typeof change !== 'object' || typeof change.where !== 'string') {
    throw new WriteValidationError(undefined, undefined, "update expects { where: '<predicate>', set: { column: newValue } }");
  }
  const predicate = parsePredicate(change.where, schema.fields);
  if (schema.primaryKeys.length === 0) {
    if (!table.context.options.deletionVectorsEnabled) {
      throw new NotSupportedError(
        `${table.location} is an append table without deletion vectors: rows can be updated only with the table option ` +
          "'deletion-vectors.enabled' = 'true' (set it with ALTER TABLE / 'tidemark alter'), or rewrite the partitions with an overwrite",
      );
    }
    const assignments = parseAssignments(schema.fields, change.set);
    const skippedDryRun = await dryRunSkipped(table, options);
    if (skippedDryRun) return { deleted: 0, result: skippedDryRun, plan: emptyDvPlan(), dryRun: true };
    const { deleted, result, plan } = await deleteFromAppendTable(table, predicate, {
      ...appendDeleteOptions(options),
      replaceWith: (matched, commitWith) =>
        writeThen(table, new arrow.Table(applyAssignments(matched, schema.fields, assignments)), (messages) => commitWith(messages)),
    });
    return { deleted, result, plan, dryRun: options.dryRun === true };
  }
  const merge = mergeEngineOptions(schema);
  if (merge.engine === 'aggregation' || merge.engine === 'first-row') {
    throw new NotSupportedError(
      `merge engine ${merge.engine} does not replace rows on write (${merge.engine === 'first-row' ? 'the first row is kept' : 'values are aggregated'}): rows cannot be updated`,
    );
  }
  const refused = new Map(
    schema.primaryKeys.map((k) => [k, 'is part of the primary key and cannot be updated; delete the row and insert the new one']),
  );
  const assignments = parseAssignments(schema.fields, change.set, refused);
  refuseIgnoredAssignments(schema.fields, merge, assignments);
  const skippedDryRun = await dryRunSkipped(table, options);
  if (skippedDryRun) return { deleted: 0, result: skippedDryRun, plan: primaryKeyPlan(table, null, []), dryRun: true };
  const snapshotId = await table.snapshotManager.latestId();
  const found = snapshotId === null ? [] : await findRows(table, snapshotId, change.where, options.onProgress);
  const updated = applyAssignments(found, schema.fields, assignments);
  refuseIgnoredRows(schema.fields, schema.primaryKeys, merge, assignments, found, updated);
  const plan = primaryKeyPlan(table, snapshotId, found);
  const matched = plan.rowsMatched;
  if (options.dryRun) return { deleted: 0, result: null, plan, dryRun: true };
  if (matched === 0) return { deleted: 0, result: { status: 'empty' }, plan, dryRun: false };
  options.onProgress?.({ phase: 'writing', done: 0, unit: 'files' });
  const result = await writeAndCommit(table, new arrow.Table(updated), options, (commit, committable, record) => {
    options.onProgress?.({ phase: 'committing', done: 0, unit: 'files' });
    return commitClearing(commit, committable, record);
  });
  return { deleted: result.status === 'committed' ? matched : 0, result, plan, dryRun: false };
}
