/**
 * Finishing a one-shot write whose compaction was dropped at commit. Tables whose batch reads skip
 * level 0 (deletion vectors) or whose changelog comes from compacting it (`changelog-producer` =
 * `lookup`) compact the written buckets before a write completes. When a concurrent writer
 * committed to the same buckets first, the commit re-sequences the write's files above the other's
 * and drops the compaction (it merged the records at their old sequence numbers), or the
 * compaction loses its inputs to a concurrent one: the APPEND snapshot stands, but its rows stay
 * in level 0, invisible to batch reads and absent from the changelog. A write must not return like
 * that, so the buckets are compacted again from the latest snapshot and committed as the write's
 * COMPACT snapshot, retried while concurrent commits keep taking the buckets away.
 */
import { BATCH_COMMIT_IDENTIFIER } from '@tidemark/format';
import type { CoreOptions } from '../core-options.js';
import type { CommitMessage, Committable } from '../commit-message.js';
import { CommitConflictError } from '../commit/commit-errors.js';
import { retryWaitMs, sleep } from '../commit/commit-retry.js';
import type { CommitCallOptions, CommitResult } from '../commit/file-store-commit.js';
import { TidemarkError } from '../errors.js';
import type { FileStorePathFactory } from '../path-factory.js';
import type { FileIO } from '@tidemark/storage';
import type { TableWrite } from './table-write.js';
import { withExtraFiles } from '../file-index/data-file-index-writer.js';

/**
 * The write's rows are committed (its APPEND snapshot exists) but its compaction could not be
 * committed after `commit.max-retries` attempts, so batch reads of the table do not show them (and
 * a `lookup` table has no changelog for them) until the buckets are compacted: run
 * `tidemark compact` on the table.
 */
export class CompactionNotCommittedError extends TidemarkError {
  constructor(
    message: string,
    /** The snapshots the write did commit (its APPEND snapshot among them). */
    readonly snapshotIds: readonly number[],
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** What {@link completeDroppedCompaction} needs of the table (a `Table`). */
export interface DroppedCompactionTable {
  readonly location: string;
  readonly fileIO: FileIO;
  readonly paths: FileStorePathFactory;
  readonly context: {
    readonly options: Pick<
      CoreOptions,
      'deletionVectorsEnabled' | 'changelogProducer' | 'writeOnly' | 'commitMaxRetries' | 'commitMinRetryWaitMs' | 'commitMaxRetryWaitMs'
    >;
  };
  readonly isPrimaryKeyTable: boolean;
  /** A fresh writer, planning its buckets from the latest snapshot. */
  newBatchWrite(): TableWrite;
}

/** The write's committer (a `TableCommit`: same commit user). */
export interface DroppedCompactionCommitter {
  commit(committable: Committable, options: Omit<CommitCallOptions, 'commitUser'>): Promise<CommitResult>;
}

/**
 * Whether a write to this table must leave level 0 compacted: batch reads of deletion-vector
 * tables skip it, and `lookup` tables produce their changelog by compacting it.
 */
export function compactsLevel0AtCommit(table: Pick<DroppedCompactionTable, 'context' | 'isPrimaryKeyTable'>): boolean {
  const o = table.context.options;
  return table.isPrimaryKeyTable && !o.writeOnly && (o.deletionVectorsEnabled || o.changelogProducer === 'lookup');
}

/**
 * `result` of committing `committed`, with the dropped compaction done: when the table compacts
 * level 0 at commit and `result.compactionDropped` is set, the buckets the write had compacted are
 * compacted again by a fresh writer from the latest snapshot and committed as the identifier's
 * COMPACT snapshot (retried, with the commit backoff, while a concurrent commit takes them away
 * again). Returns the result with every snapshot created and without `compactionDropped`; any
 * other result is returned as it is.
 *
 * @throws CompactionNotCommittedError when the compaction still lost after `commit.max-retries`
 *   retries, or failed otherwise (the rows are committed but not visible to batch reads until
 *   compacted; callers must not discard the write's files).
 */
export async function completeDroppedCompaction(
  table: DroppedCompactionTable,
  committer: DroppedCompactionCommitter,
  committed: Committable,
  result: CommitResult,
): Promise<CommitResult> {
  if (result.status !== 'committed' || result.compactionDropped === undefined || !compactsLevel0AtCommit(table)) return result;
  const options = table.context.options;
  const buckets = committed.messages.filter((m) => (m.compactBefore?.length ?? 0) > 0 || (m.compactAfter?.length ?? 0) > 0);
  const ids = [...result.snapshotIds];
  const done = (): CommitResult => ({
    status: 'committed',
    snapshotId: ids[ids.length - 1]!,
    snapshotIds: ids,
    ...(result.resequencedFiles !== undefined ? { resequencedFiles: result.resequencedFiles } : {}),
  });
  let reason = result.compactionDropped;
  const held = `${table.location}: snapshot ${result.snapshotIds.join(', ')} holds the write's rows, but`;
  const advice =
    `until the buckets are compacted, batch reads of this table do not show those rows` +
    `${options.changelogProducer === 'lookup' ? ' and the changelog lacks them' : ''}: run 'tidemark compact' on the table`;
  for (let retry = 0; ; retry++) {
    let outcome: CompactOutcome;
    try {
      outcome = await compactOnce(table, committer, committed.identifier, buckets);
    } catch (e) {
      // The rows are committed: say so, whatever stopped the compaction (callers must not discard them).
      throw new CompactionNotCommittedError(`${held} compacting them failed (${(e as Error).message}); ${advice}`, ids, { cause: e });
    }
    if (outcome.status === 'done') {
      ids.push(...outcome.snapshotIds);
      return done();
    }
    reason = outcome.reason;
    if (retry >= options.commitMaxRetries) break;
    await sleep(retryWaitMs(retry, options.commitMinRetryWaitMs, options.commitMaxRetryWaitMs));
  }
  throw new CompactionNotCommittedError(
    `${held} its compaction lost to concurrent commits ${options.commitMaxRetries + 1} times (last: ${reason}); ${advice}`,
    ids,
  );
}

type CompactOutcome =
  { readonly status: 'done'; readonly snapshotIds: readonly number[] } | { readonly status: 'lost'; readonly reason: string };

/** One attempt: a fresh writer compacts `buckets` from the latest snapshot, and the compaction is committed. */
async function compactOnce(
  table: DroppedCompactionTable,
  committer: DroppedCompactionCommitter,
  identifier: bigint,
  buckets: readonly CommitMessage[],
): Promise<CompactOutcome> {
  const writer = table.newBatchWrite();
  try {
    let messages: CommitMessage[];
    try {
      await writer.compactBuckets(buckets);
      messages = await writer.prepareCommit();
    } catch (e) {
      await writer.abort().catch(() => undefined);
      throw e;
    }
    // Nothing left in level 0 there: another commit compacted the buckets meanwhile.
    if (!messages.some((m) => (m.compactAfter?.length ?? 0) > 0 || (m.compactBefore?.length ?? 0) > 0)) {
      return { status: 'done', snapshotIds: [] };
    }
    const record = writer.recordId;
    try {
      const r = await committer.commit(
        { identifier, messages },
        {
          // The identifier's APPEND snapshot is committed: this is its COMPACT snapshot.
          ...(identifier !== BATCH_COMMIT_IDENTIFIER ? { completesCompaction: true } : {}),
          ...(record !== null ? { clearsRecords: [record] } : {}),
        },
      );
      if (r.status === 'committed') writer.recordCleared();
      return { status: 'done', snapshotIds: r.status === 'committed' ? r.snapshotIds : [] };
    } catch (e) {
      if (!(e instanceof CommitConflictError)) throw e;
      await deleteCompactionOutputs(table, messages);
      return { status: 'lost', reason: e.message };
    }
  } finally {
    await writer.close();
  }
}

/** Deletes the files a refused compaction wrote (outputs that are not its inputs moved up a level). */
async function deleteCompactionOutputs(table: DroppedCompactionTable, messages: readonly CommitMessage[]): Promise<void> {
  const paths: string[] = [];
  for (const m of messages) {
    const inputs = new Set((m.compactBefore ?? []).map((f) => f.fileName));
    for (const f of m.compactAfter ?? []) {
      if (!inputs.has(f.fileName) && !f.externalPath)
        paths.push(...withExtraFiles(table.paths.dataFilePath(m.partition, m.bucket, f.fileName), f));
    }
    for (const f of m.compactChangelogFiles ?? []) paths.push(table.paths.changelogFilePath(m.partition, m.bucket, f.fileName));
    for (const f of m.compactNewIndexFiles ?? []) paths.push(table.paths.indexFilePath(f.fileName, f.externalPath));
  }
  await table.fileIO.deleteMany(paths).catch(() => undefined);
}
