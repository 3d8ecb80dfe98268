/**
 * The commit path of a table: {@link newTableCommit} makes the committer every writer uses (tables,
 * the sink, compaction, row changes), a {@link FileStoreCommit} bound to one commit user that
 * expires snapshots after the commits that created one.
 */
import { randomUUID } from 'node:crypto';
import { BATCH_COMMIT_IDENTIFIER } from '@tidemark/format';
import type { Committable } from './commit-message.js';
import {
  FileStoreCommit,
  alreadyCommittedReason,
  type CommitCallOptions,
  type CommitResult,
  type FileStoreCommitOptions,
  type OverwriteCallOptions,
} from './commit/file-store-commit.js';
import type { TableContext } from './table-context.js';
import { afterCommitJobs, type AfterCommitJobs } from './commit/after-commit.js';
import type { OverwritePlan } from './row-change-plan.js';

/** Options of {@link Table.newCommit}. */
export interface NewCommitOptions extends FileStoreCommitOptions {
  /** Commit user; default a fresh UUID (one per batch job, as in Paimon). */
  readonly commitUser?: string;
  /**
   * Expire snapshots after each commit that creates one (default true; never when the table
   * option `write-only` is `true`). Automatic tags and partition expiration follow the table
   * options whatever this says. See {@link Table.newCommit}.
   */
  readonly expire?: boolean;
}

/** Per-call switch of the automatic snapshot expiration of {@link TableCommit}. */
export interface AutoExpireCallOption {
  /**
   * `false` skips the automatic expiration after this call. `true` cannot enable it where the
   * committer or the table (`write-only`) disabled it.
   */
  readonly expire?: boolean;
}

/**
 * The commit path every writer uses (tables, the sink's committer, compaction): a committer for
 * the table of `context`, bound to one commit user. Its {@link FileStoreCommit} verifies on S3,
 * before the first snapshot, that the store refuses a second `If-None-Match: *` PUT; after each
 * commit that created a snapshot it runs the table's automatic tags, partition expiration and
 * snapshot expiration (commit/after-commit.ts; none when the table is `write-only`, no snapshot
 * expiration when `options.expire` is false). See {@link Table.newCommit}.
 *
 * @throws InvalidOptionError when the table option `write-only` is neither `true` nor `false`.
 */
export function newTableCommit(context: TableContext, options: NewCommitOptions = {}): TableCommit {
  const commitUser = options.commitUser ?? randomUUID();
  const { expire, ...storeOptions } = options;
  const inner = new FileStoreCommit(context, { checkBaseDataFiles: true, shareWithTable: true, ...storeOptions });
  const jobs = afterCommitJobs(context, inner, {
    expireSnapshots: expire !== false,
    now: options.now ?? Date.now,
    logger: options.logger ?? context.logger,
  });
  return new TableCommit(inner, commitUser, () => Promise.resolve(), jobs);
}

/**
 * A {@link FileStoreCommit} bound to one commit user (from {@link newTableCommit}). After each
 * call that created a snapshot it runs the after-commit jobs (automatic tags, partition and
 * snapshot expiration, see {@link Table.newCommit}); a call passing `expire: false` skips the
 * snapshot expiration. The jobs never throw (failures are logged).
 */
export class TableCommit {
  constructor(
    /** The underlying committer (for options not exposed here). */
    readonly fileStoreCommit: FileStoreCommit,
    readonly commitUser: string,
    private readonly beforeCommit: () => Promise<void> = () => Promise.resolve(),
    private readonly jobs: AfterCommitJobs | null = null,
  ) {}

  /**
   * Commits `committable` (identifier default Long.MAX) as an APPEND (and COMPACT) snapshot;
   * returns `skipped` when this user already committed the identifier. Then expires snapshots
   * (see {@link Table.newCommit}) unless `options.expire` is false.
   */
  async commit(
    committable: CommittableInput,
    options: Omit<CommitCallOptions, 'commitUser'> & AutoExpireCallOption = {},
  ): Promise<CommitResult> {
    const { expire, ...callOptions } = options;
    await this.beforeCommit();
    const input = normalize(committable);
    const result = await this.fileStoreCommit.commit(input, { ...callOptions, commitUser: this.commitUser });
    await this.afterCommit([result], input.identifier, expire);
    return result;
  }

  /**
   * Overwrites partitions with the committable's new files (see `FileStoreCommit.overwrite`), then
   * expires snapshots unless `options.expire` is false.
   */
  async overwrite(
    committable: CommittableInput,
    options: Omit<OverwriteCallOptions, 'commitUser'> & AutoExpireCallOption = {},
  ): Promise<CommitResult> {
    const { expire, ...callOptions } = options;
    await this.beforeCommit();
    const input = normalize(committable);
    const result = await this.fileStoreCommit.overwrite(input, { ...callOptions, commitUser: this.commitUser });
    await this.afterCommit([result], input.identifier, expire);
    return result;
  }

  /**
   * Plans an overwrite without writing anything (see `FileStoreCommit.planOverwrite`): feed the
   * rows to a `newBatchWrite({ dryRun: true })` writer and pass its `routedRows()`.
   *
   * @throws CommitInputError for a spec naming a non-partition column, or rows outside the spec.
   */
  planOverwrite(
    written: readonly { readonly partition: Uint8Array; readonly rows: number }[],
    options: Pick<OverwriteCallOptions, 'partition' | 'dynamic'> = {},
  ): Promise<OverwritePlan> {
    return this.fileStoreCommit.planOverwrite(written, options);
  }

  /** The last identifier this user committed (every identifier up to it counts as committed), or null. */
  lastCommittedIdentifier(): Promise<bigint | null> {
    return this.fileStoreCommit.lastCommittedIdentifier(this.commitUser);
  }

  /** The committables this user has not committed yet, sorted by identifier. */
  filterCommitted(committables: readonly Committable[]): Promise<Committable[]> {
    return this.fileStoreCommit.filterCommitted(committables, this.commitUser);
  }

  /**
   * Recovery: commits every committable this user has not committed yet, in identifier order,
   * then expires snapshots once (when any was committed) unless `options.expire` is false.
   */
  async filterAndCommit(
    committables: readonly Committable[],
    options: { readonly force?: boolean } & AutoExpireCallOption = {},
  ): Promise<CommitResult[]> {
    const { expire, ...callOptions } = options;
    await this.beforeCommit();
    const results = await this.fileStoreCommit.filterAndCommit(committables, this.commitUser, callOptions);
    const last =
      committables.length === 0 ? null : committables.reduce((a, c) => (c.identifier > a ? c.identifier : a), committables[0]!.identifier);
    await this.afterCommit(results, last, expire);
    return results;
  }

  /** Runs the after-commit jobs when a snapshot was created. */
  private async afterCommit(results: readonly CommitResult[], identifier: bigint | null, expire: boolean | undefined): Promise<void> {
    if (this.jobs === null) return;
    if (!results.some((r) => r.status === 'committed')) return;
    // Best effort by contract; guard anyway so that a commit that succeeded is never reported as failed.
    await this.jobs.run({ identifier, expireSnapshots: expire !== false }).catch(() => undefined);
  }
}

/** A {@link Committable} whose identifier may be omitted (Long.MAX) or given as a number. */
export type CommittableInput = Omit<Committable, 'identifier'> & { readonly identifier?: bigint | number };

function normalize(c: CommittableInput): Committable {
  return { ...c, identifier: toIdentifier(c.identifier) };
}

/** A commit identifier as given (default Long.MAX, the batch identifier) as the bigint commits take. */
export function toIdentifier(id: bigint | number | undefined): bigint {
  if (id === undefined) return BATCH_COMMIT_IDENTIFIER;
  if (typeof id === 'number' && !Number.isSafeInteger(id))
    throw new RangeError(`commit identifier ${id} is not a safe integer; pass a bigint`);
  return BigInt(id);
}

/** The result of a call whose commit user already committed `identifier`. */
/** The `skipped` result when the commit's user already committed `identifier` (or a later one), else null. */
export async function skippedAs(commit: TableCommit, identifier: bigint): Promise<CommitResult | null> {
  const last = await commit.lastCommittedIdentifier();
  return last !== null && identifier <= last
    ? { status: 'skipped', reason: alreadyCommittedReason(identifier, commit.commitUser, last) }
    : null;
}

export function skippedResult(user: string, identifier: bigint): CommitResult {
  return { status: 'skipped', reason: `commit identifier ${identifier} of commit user '${user}' was already committed` };
}
