/**
 * One-shot writes (`Table.append`, `overwrite`, `delete`, `update`): a writer and a committer per
 * call. The writer stays open until the commit has finished, and the commit clears the writer's
 * in-flight record together with its own.
 */
import { BATCH_COMMIT_IDENTIFIER } from '@tidemark/format';
import type { Committable } from '../commit-message.js';
import type { CommitResult } from '../commit/file-store-commit.js';
import { commitNotApplied } from '../commit/commit-errors.js';
import type { TableContext } from '../table-context.js';
import { skippedAs, toIdentifier, type CommittableInput, type NewCommitOptions, type TableCommit } from '../table-commit.js';
import { replanOnBucketConflict } from '../write/bucket-replan.js';
import { completeDroppedCompaction, compactsLevel0AtCommit, type DroppedCompactionTable } from '../write/dropped-compaction.js';
import type { TableWrite, TableWriteOptions, WriteInput } from '../write/table-write.js';

/** What a one-shot write needs of its table (a `Table` provides it). */
export interface WritingTable extends DroppedCompactionTable {
  readonly context: TableContext;
  newBatchWrite(options?: TableWriteOptions): TableWrite;
  newCommit(options?: NewCommitOptions): TableCommit;
}

/** Commit options of a one-shot write. */
export interface OneShotCommitOptions {
  readonly commitUser?: string;
  readonly identifier?: bigint | number;
  readonly expire?: boolean;
  /** Primary-key tables: the input field holding each row's kind. */
  readonly rowKindField?: string;
}

/** The messages a writer prepared for its commit. */
export type WriterMessages = Awaited<ReturnType<TableWrite['prepareCommit']>>;

/**
 * The in-flight record of the writer of a one-shot write: a commit of its files may clear it with
 * its own record ({@link commitClearing}), so that `close` need not delete it in a round trip of its own.
 */
export interface WriterRecord {
  readonly ids: readonly string[];
  /** The commit cleared it: the writer's `close` leaves it alone. */
  cleared(): void;
}

/**
 * Commits the files of a one-shot write and clears its writer's in-flight record together with the
 * commit's own, once the snapshot exists: the same guarantee as the writer's `close` afterwards
 * (files are protected until a snapshot references them), one round trip sooner.
 */
export async function commitClearing(commit: TableCommit, committable: CommittableInput, record: WriterRecord): Promise<CommitResult> {
  const ctx = commit.fileStoreCommit.context;
  // Such a table's dropped compaction is done again by the write (writeAndCommit): no warning.
  const completes = compactsLevel0AtCommit({ context: ctx, isPrimaryKeyTable: ctx.schema.primaryKeys.length > 0 });
  const result = await commit.commit(committable, { clearsRecords: record.ids, ...(completes ? { logDroppedCompaction: false } : {}) });
  if (result.status === 'committed') record.cleared();
  return result;
}

/**
 * Opens a commit for the options' user, returns `skipped` before writing any data file when the
 * identifier is already committed, else writes `rows` and hands the committable to `commit`.
 */
export async function writeAndCommit(
  table: WritingTable,
  rows: WriteInput,
  options: OneShotCommitOptions,
  commit: (tableCommit: TableCommit, committable: Committable, record: WriterRecord) => Promise<CommitResult>,
  extraWriteOptions: TableWriteOptions = {},
): Promise<CommitResult> {
  const tableCommit = table.newCommit({
    ...(options.commitUser !== undefined ? { commitUser: options.commitUser } : {}),
    ...(options.expire !== undefined ? { expire: options.expire } : {}),
  });
  const identifier = toIdentifier(options.identifier);
  if (identifier !== BATCH_COMMIT_IDENTIFIER) {
    const skip = await skippedAs(tableCommit, identifier);
    if (skip !== null) return skip;
  }
  const writeOptions = { ...extraWriteOptions, ...(options.rowKindField !== undefined ? { rowKindField: options.rowKindField } : {}) };
  const written = await writeThen(
    table,
    rows,
    async (messages, record) => ({ messages, result: await commit(tableCommit, { identifier, messages }, record) }),
    writeOptions,
  );
  // After the writer's files are committed: an error from here on must not discard them.
  return completeDroppedCompaction(table, tableCommit, { identifier, messages: written.messages }, written.result);
}

/**
 * Writes `rows`, then runs `commit` on the messages. The writer stays open until the commit has
 * finished: its in-flight record is what keeps orphan cleanup away from the new data files
 * until a snapshot references them.
 */
export async function writeThen<T>(
  table: WritingTable,
  rows: WriteInput,
  commit: (messages: WriterMessages, record: WriterRecord) => Promise<T>,
  writeOptions: TableWriteOptions = {},
): Promise<T> {
  // Dynamic buckets: a commit that lost a race for a new key's bucket is refused before anything
  // is visible, and its files are deleted; writing the rows again plans against the new latest
  // snapshot, where the key has its bucket. Rows are in memory (arrays, Arrow), so this is safe.
  return replanOnBucketConflict(table.context.options, () => writeOnceThen(table, rows, commit, writeOptions));
}

async function writeOnceThen<T>(
  table: WritingTable,
  rows: WriteInput,
  commit: (messages: WriterMessages, record: WriterRecord) => Promise<T>,
  writeOptions: TableWriteOptions,
): Promise<T> {
  const writer = table.newBatchWrite(writeOptions);
  let messages: WriterMessages;
  try {
    await writer.write(rows);
    messages = await writer.prepareCommit();
  } catch (e) {
    await writer.abort().catch(() => undefined);
    await writer.close().catch(() => undefined);
    throw e;
  }
  const recordId = writer.recordId;
  const record: WriterRecord = { ids: recordId === null ? [] : [recordId], cleared: () => writer.recordCleared() };
  try {
    return await commit(messages, record);
  } catch (e) {
    if (commitNotApplied(e)) await writer.discard(messages).catch(() => undefined);
    throw e;
  } finally {
    await writer.close();
  }
}
