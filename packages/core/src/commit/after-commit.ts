/**
 * What the table commit path runs after each commit that created a snapshot, as Java's
 * `TableCommitImpl` does (none of it when the table is `write-only`):
 *
 * 1. automatic tags (`tag.automatic-creation`, `tag.num-retained-max`, tag retention);
 * 2. partition expiration (`partition.expiration-time`), at most once per
 *    `partition.expiration-check-interval`;
 * 3. snapshot expiration (`snapshot.*`), unless the committer or the call turns it off.
 *
 * Tags come first (Java tags last) so that the snapshot a new tag names cannot be expired by the
 * same run. Every step is best effort: the commit already succeeded, so a failure is logged and
 * the next commit (or `tidemark maintain`) retries it.
 */
import { AutoTagState, autoTagsEnabled, runAutoTags } from '../auto-tag/tag-auto-manager.js';
import { AutoExpireState, expireAfterCommit } from '../expire/auto-expire.js';
import { PartitionExpireState, expirePartitions } from '../partition/partition-expire.js';
import type { TableContext } from '../table-context.js';
import type { CommitLogger, FileStoreCommit } from './file-store-commit.js';

/** One call's view of the jobs: which identifier it committed, and whether it allows snapshot expiration. */
export interface AfterCommitCall {
  /** The commit identifier (Long.MAX for batch commits); null when unknown (recovery of several). */
  readonly identifier: bigint | null;
  /** False: skip snapshot expiration for this call. */
  readonly expireSnapshots: boolean;
}

/** The after-commit jobs of one committer. */
export interface AfterCommitJobs {
  /** Runs the jobs; never throws. */
  run(call: AfterCommitCall): Promise<void>;
}

/**
 * Per table context: what snapshot expiration learned (expiration only moves the earliest
 * snapshot forward, so what any committer of the table saw stays a safe bound for the others),
 * the automatic-tag state, and the last partition-expiration check.
 */
const expireStates = new WeakMap<TableContext, AutoExpireState>();
const tagStates = new WeakMap<TableContext, AutoTagState>();
const partitionStates = new WeakMap<TableContext, PartitionExpireState>();

function stateOf<T>(map: WeakMap<TableContext, T>, context: TableContext, make: () => T): T {
  let s = map.get(context);
  if (s === undefined) map.set(context, (s = make()));
  return s;
}

/**
 * The after-commit jobs of a committer made by `newTableCommit`, or null when the table is
 * `write-only`.
 *
 * @throws InvalidOptionError when `write-only` is neither `true` nor `false`.
 */
export function afterCommitJobs(
  context: TableContext,
  inner: FileStoreCommit,
  options: { readonly expireSnapshots: boolean; readonly now: () => number; readonly logger: CommitLogger },
): AfterCommitJobs | null {
  if (context.options.writeOnly) return null;
  const { now: clock, logger } = options;
  const known = stateOf(expireStates, context, () => new AutoExpireState());
  const partitions = stateOf(partitionStates, context, () => new PartitionExpireState(clock()));
  const warn = (what: string, e: unknown): void =>
    logger.warn(
      `${what} after a commit to ${context.location} failed (the commit itself succeeded; the next commit or 'tidemark maintain' retries): ${e instanceof Error ? e.message : String(e)}`,
    );

  const tags = async (call: AfterCommitCall): Promise<void> => {
    if (!autoTagsEnabled(context)) return;
    await runAutoTags(
      context,
      stateOf(tagStates, context, () => new AutoTagState()),
      {
        now: clock,
        created: inner.lastCreated,
        identifier: call.identifier,
      },
    ).catch((e: unknown) => warn('automatic tag creation', e));
  };

  const expireOldPartitions = async (call: AfterCommitCall): Promise<void> => {
    if (!partitions.due(context, call.identifier, clock())) return;
    await expirePartitions(context, { now: clock, logger }).catch((e: unknown) => warn('partition expiration', e));
  };

  const expireSnapshots = async (): Promise<void> => {
    const created = inner.lastCreated;
    // Most commits cannot expire anything (too few snapshots, or all too young): no requests then.
    if (created !== null && created.schemaId === context.schema.id) {
      if (!known.mayExpire(created.id, created.schemaId, context.options, clock())) return;
    }
    const summary = await expireAfterCommit(context, { now: clock, logger });
    if (summary === null || created === null) return;
    const earliest = summary.earliestSnapshotId;
    const next = earliest === null ? null : await inner.snapshots.tryGet(earliest + 1).catch(() => null);
    known.learn(earliest, next?.timeMillis ?? null, created.schemaId, context.options);
  };

  return {
    async run(call) {
      await tags(call);
      await expireOldPartitions(call);
      if (options.expireSnapshots && call.expireSnapshots) await expireSnapshots().catch(() => undefined);
    },
  };
}
