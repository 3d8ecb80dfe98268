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
  type CommitCallOptions,
  type CommitResult,
  type FileStoreCommitOptions,
  type OverwriteCallOptions,
} from './commit/file-store-commit.js';
import type { TableContext } from './table-context.js';
import { AutoExpireState, expireAfterCommit } from './expire/auto-expire.js';
import type { OverwritePlan } from './row-change-plan.js';

/** Options of {@link Table.newCommit}. */
export interface NewCommitOptions extends FileStoreCommitOptions {
  /** Commit user; default a fresh UUID (one per batch job, as in Paimon). */
  readonly commitUser?: string;
  /**
   * Expire snapshots after each commit that creates one (default true; never when the table
   * option `write-only` is `true`). See {@link Table.newCommit}.
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
 * What expiration runs learned, per table context: expiration only moves the earliest snapshot
 * forward, so what any committer of the table saw stays a safe bound for the others.
 */
const expireStates = new WeakMap<TableContext, AutoExpireState>();

/**
 * The commit path every writer uses (tables, the sink's committer, compaction): a committer for
 * the table of `context`, bound to one commit user. Its {@link FileStoreCommit} verifies on S3,
 * before the first snapshot, that the store refuses a second `If-None-Match: *` PUT; after each
 * commit that created a snapshot it expires snapshots with the table's options (unless the table
 * is `write-only` or `options.expire` is false). See {@link Table.newCommit}.
 *
 * @throws InvalidOptionError when the table option `write-only` is neither `true` nor `false`.
 */
export function newTableCommit(context: TableContext, options: NewCommitOptions = {}): TableCommit {
  const commitUser = options.commitUser ?? randomUUID();
  const { expire, ...storeOptions } = options;
  const inner = new FileStoreCommit(context, { checkBaseDataFiles: true, shareWithTable: true, ...storeOptions });
  const logger = options.logger ?? context.logger;
  // Shared by the committers of one table context (each `table.append` / `delete` / `update`
  // makes its own): what one run learned spares the next one-shot write its expiration requests.
  let state = expireStates.get(context);
  if (state === undefined) {
    state = new AutoExpireState();
    expireStates.set(context, state);
  }
  const known = state;
  const clock = options.now ?? Date.now;
  const autoExpire =
    expire !== false && !context.options.writeOnly
      ? async (): Promise<void> => {
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
        }
      : null;
  return new TableCommit(inner, commitUser, () => Promise.resolve(), autoExpire);
}

/**
 * A {@link FileStoreCommit} bound to one commit user (from {@link newTableCommit}). After each
 * call that created a snapshot it runs `autoExpire` (snapshot expiration, see {@link Table.newCommit}),
 * unless the call passes `expire: false`; `autoExpire` must not throw (failures are logged).
 */
export class TableCommit {
  constructor(
    /** The underlying committer (for options not exposed here). */
    readonly fileStoreCommit: FileStoreCommit,
    readonly commitUser: string,
    private readonly beforeCommit: () => Promise<void> = () => Promise.resolve(),
    private readonly autoExpire: (() => Promise<void>) | null = null,
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
    const result = await this.fileStoreCommit.commit(normalize(committable), { ...callOptions, commitUser: this.commitUser });
    await this.afterCommit([result], expire);
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
    const result = await this.fileStoreCommit.overwrite(normalize(committable), { ...callOptions, commitUser: this.commitUser });
    await this.afterCommit([result], expire);
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
    await this.afterCommit(results, expire);
    return results;
  }

  /** Runs the automatic expiration when a snapshot was created and neither side disabled it. */
  private async afterCommit(results: readonly CommitResult[], expire: boolean | undefined): Promise<void> {
    if (this.autoExpire === null || expire === false) return;
    if (!results.some((r) => r.status === 'committed')) return;
    // Best effort by contract; guard anyway so that a commit that succeeded is never reported as failed.
    await this.autoExpire().catch(() => undefined);
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
export function skippedResult(user: string, identifier: bigint): CommitResult {
  return { status: 'skipped', reason: `commit identifier ${identifier} of commit user '${user}' was already committed` };
}
