/**
 * `FileStoreCommit`: turns commit messages into snapshots with lock-free compare-and-swap commits
 * (docs/format.md, "Commit protocol"). The only visibility point is the atomic create of
 * `snapshot/snapshot-<latest+1>`: manifests written before it are invisible, and a lost race is
 * rebased onto the new latest snapshot and retried.
 *
 * Orphan-file protection: each snapshot attempt loop uses its own manifest-name uuid and records
 * the prefixes of those names in `inflight/commit-<uuid>.json` before writing any manifest; the
 * record is cleared once the snapshot exists, or after the attempt's files were deleted on
 * failure (inflight.ts).
 */
import type { OverwritePlan } from '../row-change-plan.js';
import type { FileIO } from '@tidemark/storage';
import {
  BATCH_COMMIT_IDENTIFIER,
  FILE_SOURCE_APPEND,
  FILE_SOURCE_COMPACT,
  INDEX_TYPE_DELETION_VECTORS,
  SNAPSHOT_VERSION,
  indexManifestEntryOf,
  partitionValueStrings,
  unescapePathName,
  serializeSnapshot,
  type CommitKind,
  type DataFileMeta,
  type DataType,
  type IndexManifestEntry,
  type ManifestEntry,
  type ManifestFileMeta,
  type Snapshot,
  type TableSchema,
} from '@tidemark/format';
import type { CommitMessage, Committable } from '../commit-message.js';
import { clearInflightFiles, recordInflightPrefixes } from '../inflight.js';
import { SchemaManager } from '../schema-manager.js';
import { SnapshotManager, type LatestProbe } from '../snapshot-manager.js';
import type { TablePaths } from '../table-paths.js';
import type { FileStorePathFactory } from '../path-factory.js';
import { isTableContext, tableContext, type TableContext } from '../table-context.js';
import { CommitConflictError, CommitInputError, CommitRetryExhaustedError } from './commit-errors.js';
import { commitOptionsOf, type CommitOptions } from './commit-options.js';
import { RetryBackoff, WriterActivity, settleAll, sleep } from './commit-retry.js';
import { checkConflicts } from './conflict-check.js';
import {
  checkDeletionVectorChanges,
  combineIndexEntries,
  resolveHashIndexChanges,
  snapshotIndexEntries,
  type IndexChanges,
} from './index-changes.js';
import { CommitBaseCheck } from './base-check.js';
import { dataManifests, liveEntries, liveRecordCount, partitionKey } from './manifest-fold.js';
import { mergeManifests } from './manifest-merge.js';
import { ManifestNames, ManifestWriter } from './manifest-writer.js';
import type { MetadataCache } from './metadata-cache.js';
import { CommitKnowledge, sharedCommitKnowledge } from './commit-knowledge.js';
import { SequenceOrderGuard, advanceSequenceMaxima, bucketKey, type SequenceMaxima } from './sequence-order.js';

/** Outcome of a commit. */
export type CommitResult =
  /** New snapshot(s) were created; `snapshotId` is the last one (COMPACT after APPEND when both). */
  | {
      readonly status: 'committed';
      readonly snapshotId: number;
      readonly snapshotIds: readonly number[];
      /**
       * Why the compaction part, or the part of some buckets, was dropped (a concurrent compaction
       * replaced its inputs after the APPEND part was committed, or the commit's files in a bucket
       * were re-sequenced above a concurrent commit's); absent when it was committed whole or there
       * was none.
       */
      readonly compactionDropped?: string;
      /**
       * Primary-key tables: new files rewritten with higher sequence numbers because another writer
       * committed to the same bucket meanwhile (absent when none was).
       */
      readonly resequencedFiles?: number;
    }
  /** This (commitUser, identifier) was already committed; nothing was written. */
  | { readonly status: 'skipped'; readonly reason: string }
  /** Nothing to commit and not forced: no snapshot. */
  | { readonly status: 'empty' };

/** Per-call options of {@link FileStoreCommit.commit}. */
export interface CommitCallOptions {
  /** Identity of the writer (a UUID per job for batch writes; stable across restarts for streaming). */
  readonly commitUser: string;
  /**
   * Kind of the append-side snapshot. Default: `APPEND`, or `OVERWRITE` when the messages delete
   * files (row-level changes), as Java does.
   */
  readonly kind?: CommitKind;
  /** Create an (empty) snapshot even when there is nothing to commit. */
  readonly force?: boolean;
  /**
   * The committable holds only the compaction of an identifier whose APPEND snapshot this user
   * already committed (a committer that stopped between the two snapshots finishes it): it is
   * committed as that identifier's COMPACT snapshot although the identifier is taken. `skipped`
   * when that COMPACT snapshot landed already or the user committed a later identifier; refused
   * with CommitInputError when the user has not committed the identifier (its data would be
   * skipped later) or the committable carries more than a compaction.
   */
  readonly completesCompaction?: boolean;
  /**
   * Ids of in-flight records (`inflight/<id>.json`) that protect the committable's files, such as
   * the record of the `TableWrite` that wrote them: when the call returns `committed`, they were
   * cleared with the commit's own record, once its last snapshot existed (in the round trip that
   * writes the LATEST hint, not one more afterwards). Otherwise they are left to their writers.
   */
  readonly clearsRecords?: readonly string[];
  /**
   * Log a dropped compaction through the committer's logger (default true). Callers that compact
   * the buckets again themselves (one-shot writes of deletion-vector and `lookup` tables, see
   * `completeDroppedCompaction`) turn it off: `compactionDropped` in the result reports it.
   */
  readonly logDroppedCompaction?: boolean;
}

/** Per-call options of {@link FileStoreCommit.overwrite}. */
export interface OverwriteCallOptions {
  readonly commitUser: string;
  /**
   * Static partition spec (`{ dt: '2024-01-01' }`, values as in partition directory names, may name
   * a subset of the partition keys). Null/omitted/empty with `dynamic: false` = the whole table.
   */
  readonly partition?: Readonly<Record<string, string>> | null;
  /**
   * Dynamic partition overwrite: replace only the partitions receiving new files. Default: table
   * option `dynamic-partition-overwrite` (true). Ignored (static) for unpartitioned tables or when
   * a partition spec is given.
   */
  readonly dynamic?: boolean;
  /** Create a snapshot even when nothing is deleted or added. */
  readonly force?: boolean;
}

/** Per-call options of {@link FileStoreCommit.dropPartitions}. */
export interface DropPartitionsCallOptions {
  readonly commitUser: string;
  /** Commit identifier (default Long.MAX, a batch commit). */
  readonly identifier?: bigint;
  /** Snapshot properties. */
  readonly properties?: Readonly<Record<string, string>>;
  /**
   * Called at every attempt with the live files the drop is about to delete (as of the snapshot
   * it builds on); throwing stops the drop with nothing committed. Partition expiration uses it to
   * refuse dropping a partition that a concurrent writer made recent.
   */
  readonly verify?: (live: readonly ManifestEntry[]) => void;
}

/**
 * One snapshot attempt of a commit, as reported to {@link FileStoreCommitOptions.onAttempt}: what
 * it tried, how it ended and the backoff drawn after it.
 */
export interface CommitAttemptReport {
  readonly commitUser: string;
  readonly identifier: bigint;
  /** 0 for the first attempt of the snapshot, then 1, 2, ... */
  readonly retry: number;
  /** The snapshot id the attempt tried to create. */
  readonly snapshotId: number;
  /** `already-exists`: another writer created that id first (a lost race); `error`: unknown outcome. */
  readonly outcome: 'created' | 'already-exists' | 'error';
  /** From the start of the attempt (latest-snapshot probe) to the answer of its snapshot create. */
  readonly attemptMs: number;
  /** Backoff drawn before the next attempt (0 when created or when the commit gives up). */
  readonly waitMs: number;
}

/** Minimal logger for best-effort failures (hint writes, clean-up). */
export interface CommitLogger {
  warn(message: string): void;
}

/** Settings of a {@link FileStoreCommit}. */
export interface FileStoreCommitOptions {
  /** Overrides of settings derived from the table options. */
  readonly commitOptions?: Partial<CommitOptions>;
  readonly logger?: CommitLogger;
  /** Clock for `timeMillis` (tests). */
  readonly now?: () => number;
  /**
   * Record the manifest-name prefixes of each commit in `inflight/` before writing its manifests,
   * so that a concurrent orphan cleanup cannot delete them before the snapshot lands (default
   * true). Disable only where no cleanup can run concurrently (tests, benchmarks).
   */
  readonly recordInflight?: boolean;
  /**
   * Before building on the latest snapshot, also check that the live data files in the
   * (partition, bucket)s the commit touches exist with their recorded sizes (one `stat` per file
   * not checked before by this instance). The manifests and manifest lists are always checked.
   * Default false here; table commits ({@link newTableCommit}) turn it on.
   */
  readonly checkBaseDataFiles?: boolean;
  /**
   * Called after every snapshot attempt (diagnostics, benchmarks: where a commit's time goes when
   * writers contend). Runs synchronously on the commit path; an exception it throws is ignored.
   */
  readonly onAttempt?: (attempt: CommitAttemptReport) => void;
  /**
   * Share what this committer learns (manifests read or written, base-check results, the newest
   * snapshot id seen, the writers' live-file plan it advances) with the other committers of the same table context that
   * set it too, instead of keeping it per instance: a committer made per call then pays what a
   * long-lived one pays. Every fact shared is checked against storage before use, as a long-lived
   * committer's are. Default false; table commits ({@link newTableCommit}) turn it on.
   */
  readonly shareWithTable?: boolean;
}

type DeltaSource =
  | { readonly kind: 'fixed'; readonly entries: readonly ManifestEntry[] }
  | { readonly kind: 'computed'; readonly compute: (latest: Snapshot | null) => Promise<ManifestEntry[]> };

interface AttemptInput {
  readonly delta: DeltaSource;
  readonly commitKind: CommitKind;
  readonly checkConflicts: boolean;
  readonly allowBucketChange: boolean;
  readonly commitUser: string;
  readonly identifier: bigint;
  readonly watermark?: bigint;
  readonly properties?: Readonly<Record<string, string>>;
  /** Index changes of this snapshot, computed per attempt against the latest snapshot. */
  readonly index?: (latest: Snapshot | null) => Promise<IndexChanges>;
  /** Changelog files of this snapshot (ADD entries of its changelog manifest list). */
  readonly changelog?: readonly ManifestEntry[];
  /** Primary-key tables: keeps new files above sequence numbers committed meanwhile (sequence-order.ts). */
  readonly sequenceGuard?: SequenceOrderGuard;
  /** In-flight records cleared with the attempt's own once its snapshot exists (see {@link CommitCallOptions.clearsRecords}). */
  readonly clearsRecords?: readonly string[];
}

const NO_INDEX_CHANGES: IndexChanges = { entries: [], hashIndexBase: new Map() };

/**
 * What a snapshot attempt loop starts with: its manifest names, the in-flight record protecting
 * them (being written) and, for the first attempt, the latest snapshot (being read). Started
 * together so that the record PUT and the snapshot probe share one round trip.
 */
/** A base manifest list written for the snapshot after `forId`, and every file written for it. */
interface BaseList {
  readonly forId: number | null;
  readonly list: { readonly name: string; readonly size: number };
  readonly files: readonly string[];
}

interface AttemptStart {
  readonly names: ManifestNames;
  readonly recordId: string;
  readonly recorded: Promise<void>;
  readonly probe?: LatestProbe;
}

/** Delta manifests and their list written for some entries (kept across attempts while the entries stay the same). */
interface WrittenDelta {
  readonly entries: readonly ManifestEntry[];
  readonly files: string[];
  readonly list: { readonly name: string; readonly size: number };
}

/** What one call of `tryCommit` carries from attempt to attempt. */
interface CommitLoop {
  readonly input: AttemptInput;
  readonly guard: SequenceOrderGuard | undefined;
  readonly start: AttemptStart;
  readonly writer: ManifestWriter;
  readonly started: number;
  /** Set by a snapshot create with an unknown outcome: the latest snapshot id it built on. */
  uncertainAfter: number | null;
  lastError: unknown;
  delta: WrittenDelta | null;
  changelogList: { readonly name: string; readonly size: number } | undefined;
  /** Files kept across attempts (the delta and the changelog); everything else is per attempt. */
  readonly keep: Set<string>;
  keepRecord: boolean;
  recordCleared: boolean;
  /** A base list written while backing off, for the snapshot the next attempt probably builds on. */
  prebuilt: BaseList | undefined;
  /** The snapshot that took the id of the last attempt, as read while losing it (null: not read). */
  winner: Snapshot | null;
  /**
   * Files of attempts that lost their snapshot id (no snapshot can reference them): deleted
   * together when the loop ends, in one request, instead of one DELETE per lost attempt.
   */
  readonly discarded: Set<string>;
  /** The latest schema id this loop read (a retry checks only that the next id is still absent). */
  schemaKnown: number | null;
  /** Attempts that lost their snapshot id (or had an unknown outcome), and catch-ups that did not count as such. */
  lost: number;
  caughtUp: number;
}

/** One attempt as it ended. */
interface AttemptDone {
  readonly retry: number;
  readonly latest: Snapshot | null;
  readonly snapshot: Snapshot;
  readonly entries: readonly ManifestEntry[];
  readonly outcome: 'created' | 'already-exists' | 'error';
  /** The id was found taken before the create: this writer fell behind, it did not collide. */
  readonly behind: boolean;
  /** Files written by this attempt alone. */
  readonly attemptFiles: readonly string[];
  readonly attemptMs: number;
}

/** The index changes the messages carry (ADD new, DELETE replaced) and each partition's hash-index base. */
function indexChangesOf(messages: readonly CommitMessage[]): IndexChanges {
  const entries: IndexManifestEntry[] = [];
  const hashIndexBase = new Map<string, number | null>();
  for (const m of messages) {
    for (const f of m.deletedIndexFiles ?? []) entries.push(indexManifestEntryOf('DELETE', m.partition, m.bucket, f));
    for (const f of m.newIndexFiles ?? []) entries.push(indexManifestEntryOf('ADD', m.partition, m.bucket, f));
    if (m.indexBaseSnapshotId === undefined) continue;
    const k = partitionKey(m.partition);
    const prev = hashIndexBase.get(k);
    // Messages planned against different snapshots: the oldest covers every change since either.
    const id = m.indexBaseSnapshotId;
    if (prev === undefined || id === null || (prev !== null && id < prev)) hashIndexBase.set(k, id);
  }
  return { entries, hashIndexBase };
}

/** The index changes of the messages' compactions (deletion vectors rewritten by compaction). */
function compactIndexChangesOf(messages: readonly CommitMessage[]): IndexChanges {
  const entries: IndexManifestEntry[] = [];
  for (const m of messages) {
    for (const f of m.compactDeletedIndexFiles ?? []) entries.push(indexManifestEntryOf('DELETE', m.partition, m.bucket, f));
    for (const f of m.compactNewIndexFiles ?? []) entries.push(indexManifestEntryOf('ADD', m.partition, m.bucket, f));
  }
  return { entries, hashIndexBase: new Map() };
}

/** ADD entries of the changelog files the messages carry (Java `appendChangelog`). */
function changelogEntriesOf(messages: readonly CommitMessage[]): ManifestEntry[] {
  const out: ManifestEntry[] = [];
  for (const m of messages) for (const f of m.newChangelogFiles ?? []) out.push(entry('ADD', m, withSource(f, FILE_SOURCE_APPEND)));
  return out;
}

/** The identity every snapshot of one commit call carries. */
interface SnapshotBase {
  readonly commitUser: string;
  readonly identifier: bigint;
  readonly watermark: bigint | undefined;
  readonly properties: Readonly<Record<string, string>> | undefined;
}

/**
 * What one {@link FileStoreCommit.commit} call commits, sorted from its messages: the append part
 * (new and deleted files, changelog, index changes) and the compaction part (which a re-sequenced
 * bucket or a lost race may drop, hence mutable).
 */
interface CommitParts {
  readonly appendEntries: readonly ManifestEntry[];
  readonly compactEntries: ManifestEntry[];
  readonly changelogEntries: readonly ManifestEntry[];
  /** Changelog of compactions goes with the COMPACT snapshot (Java `compactChangelog`). */
  readonly compactChangelog: ManifestEntry[];
  readonly index: IndexChanges;
  compactIndex: IndexChanges;
  /** Messages planned against a hash index are checked at commit even without index changes. */
  readonly checkIndex: boolean;
  /** Nothing to commit (and not forced). */
  readonly empty: boolean;
  /** The call creates an append-side snapshot. */
  readonly appendPart: boolean;
  /** A COMPACT snapshot follows the append part. */
  readonly compactionFollows: boolean;
}

function commitPartsOf(messages: readonly CommitMessage[], force: boolean): CommitParts {
  const appendEntries: ManifestEntry[] = [];
  const compactEntries: ManifestEntry[] = [];
  const changelogEntries = changelogEntriesOf(messages);
  const compactChangelog: ManifestEntry[] = [];
  for (const m of messages) {
    for (const f of m.compactChangelogFiles ?? []) compactChangelog.push(entry('ADD', m, withSource(f, FILE_SOURCE_APPEND)));
  }
  for (const m of messages) {
    for (const f of m.newFiles) appendEntries.push(entry('ADD', m, withSource(f, FILE_SOURCE_APPEND)));
    for (const f of m.deletedFiles ?? []) appendEntries.push(entry('DELETE', m, f));
    for (const f of m.compactBefore ?? []) compactEntries.push(entry('DELETE', m, f));
    for (const f of m.compactAfter ?? []) compactEntries.push(entry('ADD', m, withSource(f, FILE_SOURCE_COMPACT)));
  }
  const index = indexChangesOf(messages);
  const compactIndex = compactIndexChangesOf(messages);
  const hasIndex = index.entries.length > 0;
  const hasCompaction = compactEntries.length > 0 || compactIndex.entries.length > 0;
  return {
    appendEntries,
    compactEntries,
    changelogEntries,
    compactChangelog,
    index,
    compactIndex,
    checkIndex: hasIndex || index.hashIndexBase.size > 0,
    empty: appendEntries.length === 0 && !hasCompaction && changelogEntries.length === 0 && !hasIndex && !force,
    appendPart: appendEntries.length > 0 || hasIndex || changelogEntries.length > 0 || !hasCompaction,
    compactionFollows: hasCompaction,
  };
}

function withSource(f: DataFileMeta, source: number): DataFileMeta {
  return f.fileSource === null || f.fileSource === undefined ? { ...f, fileSource: source } : f;
}

function entry(kind: 'ADD' | 'DELETE', m: CommitMessage, file: DataFileMeta): ManifestEntry {
  return { kind, partition: m.partition, bucket: m.bucket, totalBuckets: m.totalBuckets, file };
}

function sameEntries(a: readonly ManifestEntry[], b: readonly ManifestEntry[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * Commits to one table. One instance may serve many commits (it caches what it learned about
 * commit users' identifiers); it is not meant to be used by two concurrent `commit` calls of the
 * same commitUser.
 *
 * Idempotency: a commit whose identifier is not greater than the last identifier its commitUser
 * committed is skipped (Paimon's `filterCommitted`). Batch commits (identifier Long.MAX) are not
 * de-duplicated by {@link commit}: as in Paimon, every batch job uses a fresh commitUser, so a
 * Long.MAX identifier can never have been committed by it before.
 */
/**
 * Why a commit of `identifier` by `user` is skipped, `last` being the last identifier that user
 * committed: equal, it was committed; lower, it counts as committed (Paimon's `filterCommitted`
 * takes every identifier up to the last), which a retried job with a stale identifier should hear.
 */
export function alreadyCommittedReason(identifier: bigint, user: string, last: bigint): string {
  return identifier >= last
    ? `commit identifier ${identifier} of commit user '${user}' was already committed`
    : `commit identifier ${identifier} of commit user '${user}' is below ${last}, the last identifier it committed: ` +
        'identifiers of a commit user must increase, and every one up to the last counts as committed (as in Paimon)';
}

export class FileStoreCommit {
  readonly options: CommitOptions;
  readonly snapshots: SnapshotManager;
  private readonly schemas: SchemaManager;
  private readonly partitionTypes: readonly DataType[];
  private readonly logger: CommitLogger;
  private readonly recordInflight: boolean;
  private readonly now: () => number;
  /** `bucket = -1` without primary key: deletion vectors are then kept per file, not per bucket. */
  private readonly bucketUnaware: boolean;
  /** Per commitUser: highest snapshot id scanned and the user's last identifier at or below it. */
  private readonly committedCache = new Map<string, { scannedTo: number; identifier: bigint | null; kind: CommitKind | null }>();
  /**
   * Manifest lists and manifests this committer wrote or read (immutable files; bounded), base-check results,
   * and the id of the newest snapshot seen to exist (its last commit, or the winner of a race it
   * lost: the next commit probes forward from it instead of reading the LATEST hint). Per
   * instance, or shared by the table's committers (`shareWithTable`).
   */
  private readonly knowledge: CommitKnowledge;
  private get cache(): MetadataCache {
    return this.knowledge.cache;
  }
  /**
   * Highest sequence number per bucket as of some snapshot (primary-key tables), folded forward
   * over the ADD entries of later snapshots. Per instance, not shared: a fold never lowers a
   * maximum when files are deleted (compaction outputs keep their inputs' maximum, but an
   * overwrite or a compaction that dropped every record does not), so a long-lived fold can run
   * above the live maximum a fresh writer continues from; such buckets are marked uncertain and
   * read again before anything is re-sequenced.
   */
  private readonly sequenceMaxima: { maxima: SequenceMaxima | null } = { maxima: null };
  private get knownLatest(): number | null {
    return this.knowledge.knownLatest;
  }
  private set knownLatest(id: number | null) {
    this.knowledge.knownLatest = id;
  }
  /** Waits between attempts, adapted to how long attempts take on this store. */
  private readonly backoff: RetryBackoff;
  /** Who committed the snapshots this committer saw last: how many other writers contend. */
  private readonly activity = new WriterActivity();
  private created: Snapshot | null = null;
  private readonly onAttempt: ((attempt: CommitAttemptReport) => void) | undefined;

  /** The snapshot this committer created last (null before its first). */
  get lastCreated(): Snapshot | null {
    return this.created;
  }

  readonly fileIO: FileIO;
  readonly paths: FileStorePathFactory;
  /** Table schema (partition keys and types, options). */
  readonly schema: TableSchema;
  /** The table this committer commits to. */
  readonly context: TableContext;

  /** A committer for the table of `context` (e.g. `table.context`). */
  constructor(context: TableContext, options?: FileStoreCommitOptions);
  /** Shorthand: the context is built from the storage, the paths' root and branch, and the schema. */
  constructor(fileIO: FileIO, paths: TablePaths, schema: TableSchema, options?: FileStoreCommitOptions);
  constructor(
    first: TableContext | FileIO,
    second?: FileStoreCommitOptions | TablePaths,
    third?: TableSchema,
    fourth: FileStoreCommitOptions = {},
  ) {
    let ctx: TableContext;
    let options: FileStoreCommitOptions;
    if (isTableContext(first)) {
      ctx = first;
      options = (second as FileStoreCommitOptions | undefined) ?? {};
    } else {
      const paths = second as TablePaths;
      const schema = third!;
      for (const k of schema.partitionKeys) {
        if (!schema.fields.some((x) => x.name === k))
          throw new CommitInputError(`partition key '${k}' is not a column of table ${paths.root}`);
      }
      options = fourth;
      ctx = tableContext(first, paths.root, schema, { branch: paths.branch, ...(options.logger ? { logger: options.logger } : {}) });
    }
    this.context = ctx;
    this.fileIO = ctx.fileIO;
    this.paths = ctx.paths;
    this.schema = ctx.schema;
    const schema = ctx.schema;
    const fileIO = ctx.fileIO;
    const paths = ctx.paths;
    this.options = { ...commitOptionsOf(ctx.options), ...options.commitOptions };
    this.snapshots = new SnapshotManager(fileIO, paths);
    this.schemas = new SchemaManager(fileIO, paths);
    this.partitionTypes = schema.partitionKeys.map((k) => schema.fields.find((x) => x.name === k)!.type);
    this.logger = options.logger ?? { warn: (m) => console.warn(`[tidemark] ${m}`) };
    this.now = options.now ?? Date.now;
    this.recordInflight = options.recordInflight ?? true;
    this.onAttempt = options.onAttempt;
    this.bucketUnaware = schema.primaryKeys.length === 0 && ctx.options.bucket === -1;
    this.knowledge = options.shareWithTable === true ? sharedCommitKnowledge(ctx) : new CommitKnowledge(fileIO, paths);
    this.backoff = new RetryBackoff(this.options.minRetryWaitMs, this.options.maxRetryWaitMs);
    this.baseCheck = new CommitBaseCheck(
      fileIO,
      paths,
      options.checkBaseDataFiles === true
        ? (e) => paths.dataFilePath(this.partitionString(e.partition), e.bucket, e.file.fileName, e.file.externalPath)
        : null,
      this.cache,
      this.knowledge.baseCheck,
    );
  }

  /**
   * Commits `committable`: an APPEND snapshot for new (and deleted) files, then a COMPACT snapshot
   * with the same identifier when messages carry compaction changes.
   *
   * @throws CommitConflictError when files this commit deletes are no longer live (nothing of the
   *   conflicting snapshot is visible). A conflicting COMPACT after a committed APPEND does not
   *   throw: the compaction is dropped (`compactionDropped`).
   * @throws CommitRetryExhaustedError after `commit.max-retries` lost races or `commit.timeout`.
   */
  async commit(committable: Committable, options: CommitCallOptions): Promise<CommitResult> {
    const user = checkUser(options.commitUser);
    const parts = commitPartsOf(committable.messages, options.force === true);
    // Primary-key tables: new files are kept above sequence numbers committed meanwhile.
    const guard =
      parts.appendPart && parts.appendEntries.some((e) => e.kind === 'ADD') && SequenceOrderGuard.appliesTo(this.schema)
        ? new SequenceOrderGuard(this.context, this.sequenceMaxima, this.cache)
        : undefined;
    const begun = await this.beginCommit(committable, options, user, parts, guard);
    if (begun.result !== undefined) return begun.result;
    let start: AttemptStart | undefined = begun.start;

    const base: SnapshotBase = {
      commitUser: user,
      identifier: committable.identifier,
      watermark: committable.watermark,
      properties: committable.properties,
    };
    const ids: number[] = [];
    // The callers' records go with the last snapshot of the call: the COMPACT one when there is a
    // compaction (it may still be dropped; they are cleared below then).
    const clearsRecords = options.clearsRecords ?? [];
    let recordsCleared = clearsRecords.length === 0;
    if (parts.appendPart) {
      const first = start;
      start = undefined;
      ids.push(await this.commitAppendPart(parts, base, first, guard, options.kind, clearsRecords));
      recordsCleared ||= !parts.compactionFollows;
    }
    const log = options.logDroppedCompaction !== false ? this.logger : null;
    let compactionDropped = await this.dropResequencedCompaction(parts, guard, base, log);
    if (parts.compactEntries.length > 0 || parts.compactIndex.entries.length > 0) {
      const compacted = await this.commitCompactionPart(parts, base, start, ids, clearsRecords, log);
      if (compacted.snapshotId !== undefined) ids.push(compacted.snapshotId);
      compactionDropped = compacted.dropped ?? compactionDropped;
      recordsCleared ||= compacted.snapshotId !== undefined;
    }
    if (!recordsCleared) await Promise.all(clearsRecords.map((id) => this.clearRecord(id)));
    const resequencedFiles = guard?.rewrites ?? 0;
    return {
      status: 'committed',
      snapshotId: ids[ids.length - 1]!,
      snapshotIds: ids,
      ...(compactionDropped !== undefined ? { compactionDropped } : {}),
      ...(resequencedFiles > 0 ? { resequencedFiles } : {}),
    };
  }

  /**
   * The first step of {@link commit}: starts the first attempt (its in-flight record) together
   * with the latest-snapshot probe, which the idempotency check shares. Returns the call's result
   * when there is nothing to commit (empty, or the identifier already committed), else the started
   * attempt with its probe.
   */
  private async beginCommit(
    committable: Committable,
    options: CommitCallOptions,
    user: string,
    parts: CommitParts,
    guard: SequenceOrderGuard | undefined,
  ): Promise<
    { readonly result: CommitResult; readonly start?: undefined } | { readonly result?: undefined; readonly start: AttemptStart }
  > {
    let start: AttemptStart | undefined;
    if (!parts.empty) {
      await this.ensureConditionalWrites();
      start = this.beginAttempts(guard ? [guard.filePrefix] : []);
    }
    let probe: LatestProbe;
    try {
      [probe] = await settleAll([this.readLatest(), start?.recorded]);
    } catch (e) {
      if (start !== undefined) await this.clearStartedRecord(start);
      throw e;
    }
    // Batch identifiers are never de-duplicated (a fresh commitUser per job): no scan of the history.
    let skipped: CommitResult | null = null;
    if (committable.identifier !== BATCH_COMMIT_IDENTIFIER) {
      const last = await this.lastCommitted(user, probe);
      const completes = options.completesCompaction === true;
      const refused = completes ? cannotComplete(committable.identifier, user, parts.appendPart, last) : null;
      if (refused !== null) {
        if (start !== undefined) await this.clearStartedRecord(start);
        throw new CommitInputError(refused);
      }
      // Completing: the identifier's own snapshot so far is its APPEND (checked above), unless
      // its COMPACT landed already, which is then skipped like any committed identifier.
      skipped = this.skipResult(committable.identifier, user, last?.identifier ?? null, completes && last?.kind !== 'COMPACT');
    }
    if (skipped !== null || parts.empty) {
      if (start !== undefined) await this.clearStartedRecord(start);
      return { result: skipped ?? { status: 'empty' } };
    }
    return { start: { ...start!, probe } };
  }

  /** The APPEND (or, with row-level deletes and deletion vectors, OVERWRITE) snapshot of a commit. */
  private async commitAppendPart(
    parts: CommitParts,
    base: SnapshotBase,
    start: AttemptStart | undefined,
    guard: SequenceOrderGuard | undefined,
    kindOption: CommitKind | undefined,
    clearsRecords: readonly string[],
  ): Promise<number> {
    const { appendEntries, index, changelogEntries } = parts;
    // Row-level deletes and deletion vectors commit as OVERWRITE with conflict checks, as in Java.
    const hasDeletes =
      appendEntries.some((e) => e.kind === 'DELETE') || index.entries.some((e) => e.indexType === INDEX_TYPE_DELETION_VECTORS);
    const kind = kindOption ?? (hasDeletes ? 'OVERWRITE' : 'APPEND');
    return this.tryCommit(
      {
        ...base,
        index: parts.checkIndex ? async () => index : undefined,
        delta: { kind: 'fixed', entries: appendEntries },
        ...(changelogEntries.length > 0 ? { changelog: changelogEntries } : {}),
        commitKind: kind,
        checkConflicts: hasDeletes || kind !== 'APPEND',
        allowBucketChange: kind === 'OVERWRITE',
        ...(guard ? { sequenceGuard: guard } : {}),
        ...(!parts.compactionFollows ? { clearsRecords } : {}),
      },
      start,
    );
  }

  /**
   * Drops the compaction of the buckets whose files the append part re-sequenced: it merged our
   * records at their old sequence numbers (and names files that are no longer committed);
   * compaction is optional. Removes them from `parts` and deletes their outputs; returns why, or
   * undefined when nothing was dropped.
   */
  private async dropResequencedCompaction(
    parts: CommitParts,
    guard: SequenceOrderGuard | undefined,
    base: SnapshotBase,
    log: CommitLogger | null,
  ): Promise<string | undefined> {
    const { compactEntries, compactChangelog } = parts;
    if (guard === undefined || guard.rewrittenBuckets.size === 0 || compactEntries.length === 0) return undefined;
    const rewritten = (e: { readonly partition: Uint8Array; readonly bucket: number }): boolean =>
      guard.rewrittenBuckets.has(bucketKey(e.partition, e.bucket));
    const dropped = compactEntries.filter(rewritten);
    if (dropped.length === 0) return undefined;
    const kept = compactEntries.filter((e) => !dropped.includes(e));
    const droppedIndex = parts.compactIndex.entries.filter(rewritten);
    const droppedChangelog = compactChangelog.filter(rewritten);
    await this.deleteBestEffort([
      ...this.compactOutputs(dropped, parts.appendEntries),
      ...this.changelogPaths(droppedChangelog),
      ...this.indexOutputs(droppedIndex),
    ]);
    compactEntries.length = 0;
    compactEntries.push(...kept);
    parts.compactIndex = { ...parts.compactIndex, entries: parts.compactIndex.entries.filter((e) => !droppedIndex.includes(e)) };
    const keptChangelog = compactChangelog.filter((e) => !droppedChangelog.includes(e));
    compactChangelog.length = 0;
    compactChangelog.push(...keptChangelog);
    // Reported like a compaction lost to a race: a writer that compacts level 0 at every
    // checkpoint (deletion vectors, `lookup`) must compact these buckets again, or batch reads,
    // which skip level 0 there, miss the re-sequenced rows.
    const buckets = [...new Set(dropped.map((e) => `bucket ${e.bucket}`))].join(', ');
    log?.warn(`dropped the compaction of commit ${base.identifier} in ${buckets}: its files there were re-sequenced`);
    return `the compaction of ${buckets} was dropped: the commit's files there were re-sequenced above a concurrent commit's`;
  }

  /**
   * The COMPACT snapshot of a commit. When the append part landed (`ids` not empty) and the
   * compaction lost its inputs to a concurrent one, it is dropped (its outputs deleted) and the
   * reason returned: the data it came with is committed, and compaction is optional.
   */
  private async commitCompactionPart(
    parts: CommitParts,
    base: SnapshotBase,
    start: AttemptStart | undefined,
    ids: readonly number[],
    clearsRecords: readonly string[],
    log: CommitLogger | null,
  ): Promise<{ readonly snapshotId?: number; readonly dropped?: string }> {
    const { compactEntries, compactChangelog, compactIndex } = parts;
    try {
      const snapshotId = await this.tryCommit(
        {
          ...base,
          ...(compactIndex.entries.length > 0 ? { index: async () => compactIndex } : {}),
          delta: { kind: 'fixed', entries: compactEntries },
          ...(compactChangelog.length > 0 ? { changelog: compactChangelog } : {}),
          commitKind: 'COMPACT',
          checkConflicts: true,
          allowBucketChange: false,
          clearsRecords,
        },
        start,
      );
      return { snapshotId };
    } catch (e) {
      // A writer's compaction that lost its inputs to a concurrent compaction: the data it
      // came with is committed, and compaction is optional, so the write stands without it.
      if (!(e instanceof CommitConflictError) || ids.length === 0) throw e;
      log?.warn(`dropped the compaction of commit ${base.identifier} after snapshot ${ids[ids.length - 1]}: ${e.message}`);
      await this.deleteBestEffort([
        ...this.compactOutputs(compactEntries, parts.appendEntries),
        ...this.changelogPaths(compactChangelog),
        ...this.indexOutputs(compactIndex.entries),
      ]);
      return { dropped: e.message };
    }
  }

  /**
   * Overwrites partitions (docs/format.md, "Commit protocol"): deletes every live file of the target partitions
   * (read from the latest snapshot at each attempt) and adds the new files, as one OVERWRITE snapshot.
   *
   * @throws CommitInputError when the spec names non-partition columns or new files lie outside it.
   */
  async overwrite(committable: Committable, options: OverwriteCallOptions): Promise<CommitResult> {
    const user = checkUser(options.commitUser);
    const skipped = await this.skipIfCommitted(committable.identifier, user);
    if (skipped) return skipped;
    const adds: ManifestEntry[] = [];
    for (const m of committable.messages) {
      if (
        (m.deletedFiles?.length ?? 0) > 0 ||
        (m.compactBefore?.length ?? 0) > 0 ||
        (m.compactAfter?.length ?? 0) > 0 ||
        (m.deletedIndexFiles?.length ?? 0) > 0
      ) {
        throw new CommitInputError('an overwrite commit takes new files only (no deleted, compaction or deleted index files)');
      }
      for (const f of m.newFiles) adds.push(entry('ADD', m, withSource(f, FILE_SOURCE_APPEND)));
    }

    const target = this.overwriteTarget(
      adds.map((e) => ({ partition: e.partition, file: e.file.fileName })),
      options,
    );
    if (target === null) return { status: 'empty' };
    return this.replacePartitions(committable, user, target.filter, adds, options.force === true);
  }

  /**
   * Drops partitions: Paimon's drop-partition commit, one OVERWRITE snapshot that deletes every
   * live data and index file of each partition matching one of `partitions` and adds nothing.
   * Older snapshots keep reading the files until snapshot expiration and orphan cleanup reclaim
   * them. Each partition is a spec naming some or all partition keys, values as in directory
   * names (`partition.default-name` for NULL), or an exact serialized partition row (as in
   * manifest entries). `empty` when no live file matches.
   *
   * @throws CommitInputError for an empty list or spec, a spec naming a non-partition column, or an unpartitioned table.
   */
  async dropPartitions(
    partitions: readonly (Readonly<Record<string, string>> | Uint8Array)[],
    options: DropPartitionsCallOptions,
  ): Promise<CommitResult> {
    const user = checkUser(options.commitUser);
    if (this.partitionTypes.length === 0)
      throw new CommitInputError(`table ${this.paths.root} is not partitioned: it has no partitions to drop`);
    if (partitions.length === 0) throw new CommitInputError('dropping partitions needs at least one partition');
    const rows = new Set<string>();
    const specs: Array<Readonly<Record<string, string>>> = [];
    for (const p of partitions) {
      if (p instanceof Uint8Array) {
        rows.add(partitionKey(p));
        continue;
      }
      if (Object.keys(p).length === 0) throw new CommitInputError('a partition spec to drop must name at least one partition key');
      this.checkSpecKeys(p, 'drop partition spec');
      specs.push(p);
    }
    const cache = new Map<string, boolean>();
    const filter = (p: Uint8Array): boolean => {
      const key = partitionKey(p);
      let hit = cache.get(key);
      if (hit === undefined) {
        hit = rows.has(key) || specs.some((spec) => this.matchesSpec(p, spec));
        cache.set(key, hit);
      }
      return hit;
    };
    const identifier = options.identifier ?? BATCH_COMMIT_IDENTIFIER;
    return this.replacePartitions(
      { identifier, messages: [], ...(options.properties ? { properties: options.properties } : {}) },
      user,
      filter,
      [],
      false,
      options.verify,
    );
  }

  /** One OVERWRITE snapshot: the live files and index files of the partitions `filter` accepts are deleted, `adds` added. */
  private async replacePartitions(
    committable: Committable,
    user: string,
    filter: (p: Uint8Array) => boolean,
    adds: readonly ManifestEntry[],
    force: boolean,
    verify?: (live: readonly ManifestEntry[]) => void,
  ): Promise<CommitResult> {
    const newIndex = indexChangesOf(committable.messages);
    const compute = async (latest: Snapshot | null): Promise<ManifestEntry[]> => {
      const live = latest === null ? [] : [...(await liveEntries(this.fileIO, this.paths, latest, filter, this.cache)).values()];
      verify?.(live);
      return [...live.map((e): ManifestEntry => ({ ...e, kind: 'DELETE' })), ...adds];
    };
    // The replaced partitions lose their index files too (hash indexes, deletion vectors); the
    // new files' indexes start from nothing, so there is no base to check against.
    const index = async (latest: Snapshot | null): Promise<IndexChanges> => {
      const old = (await snapshotIndexEntries(this.fileIO, this.paths, latest)).filter((e) => filter(e.partition));
      return {
        entries: [...old.map((e): IndexManifestEntry => ({ ...e, kind: 'DELETE' })), ...newIndex.entries],
        hashIndexBase: new Map(),
        replacesPartitions: true,
      };
    };
    // The input changelog of an overwrite holds the new rows, as Java's overwrite commit does.
    const overwriteChangelog = changelogEntriesOf(committable.messages);
    if (adds.length === 0 && !force) {
      const latest = await this.snapshots.latest();
      if ((await compute(latest)).length === 0 && (await index(latest)).entries.length === 0) return { status: 'empty' };
    }
    const id = await this.tryCommit({
      commitUser: user,
      identifier: committable.identifier,
      watermark: committable.watermark,
      properties: committable.properties,
      delta: { kind: 'computed', compute },
      ...(overwriteChangelog.length > 0 ? { changelog: overwriteChangelog } : {}),
      index,
      commitKind: 'OVERWRITE',
      checkConflicts: true,
      allowBucketChange: true,
    });
    return { status: 'committed', snapshotId: id, snapshotIds: [id] };
  }

  /**
   * The partitions an overwrite replaces (see {@link OverwriteCallOptions}), as a filter on
   * partition rows; null for a dynamic overwrite without new files (nothing to replace).
   *
   * @throws CommitInputError when the spec names non-partition columns or a new file lies outside it.
   */
  private overwriteTarget(
    adds: readonly { readonly partition: Uint8Array; readonly file?: string }[],
    options: Pick<OverwriteCallOptions, 'partition' | 'dynamic'>,
  ): { mode: 'dynamic' | 'static' | 'table'; filter: (p: Uint8Array) => boolean } | null {
    const spec = options.partition ?? null;
    const hasSpec = spec !== null && Object.keys(spec).length > 0;
    const partitioned = this.partitionTypes.length > 0;
    const dynamic = (options.dynamic ?? this.options.dynamicPartitionOverwrite) && partitioned && !hasSpec;
    if (dynamic) {
      if (adds.length === 0) return null;
      const targets = new Set(adds.map((e) => partitionKey(e.partition)));
      return { mode: 'dynamic', filter: (p) => targets.has(partitionKey(p)) };
    }
    if (!hasSpec) return { mode: 'table', filter: () => true };
    this.checkSpecKeys(spec, 'overwrite partition spec');
    const cache = new Map<string, boolean>();
    const filter = (p: Uint8Array): boolean => {
      const key = partitionKey(p);
      let hit = cache.get(key);
      if (hit === undefined) {
        hit = this.matchesSpec(p, spec);
        cache.set(key, hit);
      }
      return hit;
    };
    const outside = adds.find((e) => !filter(e.partition));
    if (outside !== undefined) {
      const what = outside.file !== undefined ? `new file '${outside.file}'` : 'the input has rows that';
      throw new CommitInputError(
        `trying to overwrite partition ${JSON.stringify(spec)}, but ${what} belong${outside.file !== undefined ? 's' : ''} to partition '${this.partitionString(outside.partition)}'`,
      );
    }
    return { mode: 'static', filter };
  }

  /**
   * Plans an overwrite without writing anything: the partitions it would replace, with their live
   * files and rows in the latest snapshot, and the rows each would get. `written` holds the
   * partitions of the input rows (a dry-run `TableWrite` routes them: `TableWrite.routedRows`).
   *
   * @throws CommitInputError as {@link FileStoreCommit.overwrite} does, for a bad spec or rows outside it.
   */
  async planOverwrite(
    written: readonly { readonly partition: Uint8Array; readonly rows: number }[],
    options: Pick<OverwriteCallOptions, 'partition' | 'dynamic'> = {},
  ): Promise<OverwritePlan> {
    const latest = await this.snapshots.latest();
    const target = this.overwriteTarget(written, options);
    const mode = target?.mode ?? 'dynamic';
    const byDir = new Map<string, { partition: Record<string, string>; currentFiles: number; currentRows: number; rowsWritten: number }>();
    const slot = (p: Uint8Array): { partition: Record<string, string>; currentFiles: number; currentRows: number; rowsWritten: number } => {
      const dir = this.paths.partitionPath(p);
      let s = byDir.get(dir);
      if (s === undefined)
        byDir.set(dir, (s = { partition: this.paths.partitionSpec(p), currentFiles: 0, currentRows: 0, rowsWritten: 0 }));
      return s;
    };
    if (target !== null && latest !== null) {
      for (const e of (await liveEntries(this.fileIO, this.paths, latest, target.filter, this.cache)).values()) {
        const s = slot(e.partition);
        s.currentFiles++;
        s.currentRows += Number(e.file.rowCount);
      }
    }
    for (const w of written) if (w.rows > 0) slot(w.partition).rowsWritten += w.rows;
    const partitions = [...byDir.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, p]) => p);
    return {
      baseSnapshotId: latest?.id ?? null,
      mode,
      partitions,
      filesReplaced: partitions.reduce((n, p) => n + p.currentFiles, 0),
      rowsReplaced: partitions.reduce((n, p) => n + p.currentRows, 0),
      rowsWritten: partitions.reduce((n, p) => n + p.rowsWritten, 0),
    };
  }

  /**
   * Drops the committables that `commitUser` already committed: finds the user's newest snapshot
   * (scanning backwards from the latest, stopping at the first missing snapshot) and keeps only
   * identifiers greater than its `commitIdentifier`. Returns the rest sorted by identifier.
   *
   * @throws CommitInputError when two committables share an identifier.
   */
  async filterCommitted(committables: readonly Committable[], commitUser: string): Promise<Committable[]> {
    const user = checkUser(commitUser);
    const sorted = [...committables].sort(byIdentifier);
    for (let i = 1; i < sorted.length; i++) {
      if (sorted[i]!.identifier === sorted[i - 1]!.identifier) {
        throw new CommitInputError(
          `two committables share identifier ${sorted[i]!.identifier}; identifiers of one commit user must be strictly increasing`,
        );
      }
    }
    if (sorted.length === 0) return [];
    const last = await this.lastCommittedIdentifier(user);
    return last === null ? sorted : sorted.filter((c) => c.identifier > last);
  }

  /**
   * Recovery: commits, in identifier order, every committable not yet committed by `commitUser`.
   * Returns one result per input committable (already committed ones as `skipped`).
   */
  async filterAndCommit(
    committables: readonly Committable[],
    commitUser: string,
    options: { readonly force?: boolean } = {},
  ): Promise<CommitResult[]> {
    const todo = new Set(await this.filterCommitted(committables, commitUser));
    const sorted = [...committables].sort(byIdentifier);
    const results: CommitResult[] = [];
    const last = todo.size < sorted.length ? await this.lastCommittedIdentifier(checkUser(commitUser)) : null;
    for (const c of sorted) {
      if (!todo.has(c)) {
        results.push({ status: 'skipped', reason: alreadyCommittedReason(c.identifier, commitUser, last ?? c.identifier) });
        continue;
      }
      // Batch identifiers bypass commit()'s own check, so recovery must not re-commit them either.
      results.push(await this.commit(c, { commitUser, force: options.force }));
    }
    return results;
  }

  /** The `skipped` result when `user` already committed `identifier` (never for batch commits), else null. */
  private async skipIfCommitted(identifier: bigint, user: string): Promise<CommitResult | null> {
    if (identifier === BATCH_COMMIT_IDENTIFIER) return null;
    return this.skipResult(identifier, user, await this.lastCommittedIdentifier(user));
  }

  private skipResult(identifier: bigint, user: string, last: bigint | null, completesCompaction = false): CommitResult | null {
    if (identifier === BATCH_COMMIT_IDENTIFIER || last === null || identifier > last) return null;
    if (completesCompaction && identifier === last) return null;
    return { status: 'skipped', reason: alreadyCommittedReason(identifier, user, last) };
  }

  /**
   * The newest snapshot, probed forward from the last one this committer saw. `fresh`: that
   * snapshot, read by this attempt loop a moment ago (the winner of the race it just lost): not
   * read a third time.
   */
  private async readLatest(fresh?: Snapshot): Promise<LatestProbe> {
    const known = this.knownLatest;
    const probe = await this.snapshots.latestFrom(known, this.probeWindow, fresh);
    this.knownLatest = probe.latest?.id ?? null;
    // Probe as far ahead as other writers went last time, and the absent id after that: one GET
    // past the known id when this committer is alone, a few when others commit too (each window
    // is one round trip). Without that absent id a repeat of the last gap took a second round.
    if (known !== null && probe.latest !== null) this.probeWindow = Math.min(4, Math.max(1, probe.latest.id - known + 1));
    return probe;
  }

  /** How many ids past the known latest the next probe reads in its first round trip. */
  private get probeWindow(): number {
    return this.knowledge.probeWindow;
  }
  private set probeWindow(n: number) {
    this.knowledge.probeWindow = n;
  }

  /**
   * The last identifier `user` committed (newest snapshot of that user), or null: every identifier
   * up to it counts as committed. `probe` (a latest snapshot just read, internal) saves finding the
   * latest again and reading the snapshots it read.
   */
  async lastCommittedIdentifier(user: string, probe?: LatestProbe): Promise<bigint | null> {
    return (await this.lastCommitted(user, probe))?.identifier ?? null;
  }

  /** Identifier and kind of `user`'s newest snapshot, or null (see {@link lastCommittedIdentifier}). */
  private async lastCommitted(user: string, probe?: LatestProbe): Promise<{ identifier: bigint; kind: CommitKind | null } | null> {
    const latestId = probe !== undefined ? (probe.latest?.id ?? null) : await this.snapshots.latestId();
    if (latestId === null) {
      this.committedCache.delete(user);
      return null;
    }
    let cached = this.committedCache.get(user);
    // A rollback can remove scanned snapshots: start over then.
    if (cached !== undefined && cached.scannedTo > latestId) cached = undefined;
    const floor = cached?.scannedTo ?? 0;
    let found: { identifier: bigint; kind: CommitKind | null } | null = null;
    for (let id = latestId; id > floor; id--) {
      const s = probe?.read.get(id) ?? (await this.snapshots.tryGet(id));
      if (s === null) break; // expired or never written: Paimon stops here too
      if (s.commitUser === user) {
        found = { identifier: s.commitIdentifier, kind: s.commitKind };
        break;
      }
    }
    const identifier = found?.identifier ?? cached?.identifier ?? null;
    const kind = found !== null ? found.kind : (cached?.kind ?? null);
    this.committedCache.set(user, { scannedTo: latestId, identifier, kind });
    return identifier === null ? null : { identifier, kind };
  }

  /** After an uncertain snapshot create: did one of our attempts land in (afterId, latest]? */
  private async findOwnSnapshot(afterId: number, probe: LatestProbe, input: AttemptInput): Promise<number | null> {
    const latest = probe.latest;
    if (latest === null) return null;
    for (let id = latest.id; id > afterId; id--) {
      const s = id === latest.id ? latest : (probe.read.get(id) ?? (await this.snapshots.tryGet(id)));
      if (s === null) break;
      if (s.commitUser === input.commitUser && s.commitIdentifier === input.identifier && s.commitKind === input.commitKind) return id;
    }
    return null;
  }

  private conditionalWritesChecked: Promise<void> | undefined;

  /**
   * Checks (once per committer; the storage caches the verdict per prefix and process) that the
   * store refuses a second create of one key, which the snapshot compare-and-swap relies on.
   */
  private ensureConditionalWrites(): Promise<void> {
    const io = this.fileIO;
    if (typeof io.verifyConditionalWrites !== 'function') return Promise.resolve();
    this.conditionalWritesChecked ??= io.verifyConditionalWrites(this.paths.root).catch((e: unknown) => {
      this.conditionalWritesChecked = undefined;
      throw e;
    });
    return this.conditionalWritesChecked;
  }

  /** Checks the snapshot a commit builds on (manifests, data files of the touched buckets). */
  private readonly baseCheck: CommitBaseCheck;

  /**
   * Fresh manifest names for one snapshot (concurrent commits of one instance never share a
   * record), and the in-flight record protecting them, being written: no manifest may be written
   * before `recorded` resolves.
   */
  private beginAttempts(extraPrefixes: readonly string[] = []): AttemptStart {
    const names = new ManifestNames();
    const recordId = `commit-${names.uuid}`;
    const recorded = this.recordInflight
      ? recordInflightPrefixes(this.fileIO, this.paths.root, recordId, [...names.inflightPrefixes(), ...extraPrefixes])
      : Promise.resolve();
    // Awaited later; a rejection must not go unhandled in between.
    recorded.catch(() => undefined);
    return { names, recordId, recorded };
  }

  /** Clears the record of a start that wrote nothing (skipped or empty commit, failed probe). */
  private async clearStartedRecord(start: AttemptStart): Promise<void> {
    if (!this.recordInflight) return;
    try {
      await start.recorded;
    } catch {
      return; // never written
    }
    await this.clearRecord(start.recordId);
  }

  /** The retry loop around one snapshot; returns the new snapshot id. */
  private async tryCommit(input: AttemptInput, begun?: AttemptStart): Promise<number> {
    // Before anything is written: on a store that silently overwrites, two committers could both "win".
    await this.ensureConditionalWrites();
    const loop = this.openLoop(input, begun);
    try {
      // Before any manifest exists; a failure here fails the commit with nothing written.
      await loop.start.recorded;
      for (let retry = 0; ; retry++) {
        const id = await this.attempt(loop, retry);
        if (id !== null) return id;
      }
    } catch (e) {
      await this.abandonLoop(loop);
      throw e;
    } finally {
      if (this.recordInflight && !loop.keepRecord && !loop.recordCleared) await this.clearStartedRecord(loop.start);
    }
  }

  /** The state of one {@link tryCommit} call: its manifest writer, and what each attempt leaves to the next. */
  private openLoop(input: AttemptInput, begun?: AttemptStart): CommitLoop {
    const guard = input.sequenceGuard;
    // A start made by the caller recorded the guard's prefix already.
    const start = begun ?? this.beginAttempts(guard ? [guard.filePrefix] : []);
    const writer = new ManifestWriter(
      this.fileIO,
      this.paths,
      this.partitionTypes,
      {
        targetFileSize: this.options.manifestTargetFileSize,
        avro: { codec: this.options.manifestCodec, zstdLevel: this.options.zstdLevel },
      },
      start.names,
      this.cache,
    );
    return {
      input,
      guard,
      start,
      writer,
      started: this.now(),
      uncertainAfter: null,
      lastError: undefined,
      delta: null,
      changelogList: undefined,
      keep: new Set(),
      keepRecord: false,
      recordCleared: false,
      prebuilt: undefined,
      winner: null,
      discarded: new Set(),
      schemaKnown: null,
      lost: 0,
      caughtUp: 0,
    };
  }

  /** Files the loop has written so far (manifests, re-sequenced data files): whether an attempt wrote any. */
  private loopFilesWritten(loop: CommitLoop): number {
    return loop.writer.filesWritten + (loop.guard?.written.length ?? 0);
  }

  /** The latest schema id (a retry checks only that the id after the last one read is still absent). */
  private readSchemaId(loop: CommitLoop): Promise<number | null> {
    const p = this.latestSchemaId(loop.schemaKnown).then((id) => (loop.schemaKnown = id));
    p.catch(() => undefined);
    return p;
  }

  /**
   * One attempt: probe the latest snapshot, write what a snapshot on top of it needs, create it.
   * Returns its id, or null after a lost race (having backed off); throws when the loop gives up.
   */
  private async attempt(loop: CommitLoop, retry: number): Promise<number | null> {
    const attemptStarted = this.now();
    const { probe, schemaId: probedSchemaId, atProbe } = await this.probeForAttempt(loop, retry);
    loop.winner = null;
    const latest = probe.latest;
    for (const s of probe.read.values()) this.activity.saw(s.id, s.commitUser);
    if (latest !== null) this.activity.saw(latest.id, latest.commitUser);
    if (loop.uncertainAfter !== null) {
      const own = await this.findOwnSnapshot(loop.uncertainAfter, probe, loop.input);
      if (own !== null) return this.landedBefore(loop, own);
    }
    const entries = await this.attemptEntries(loop, latest);
    // The schema id, the base check, the delta upload and the base list are independent: one
    // round trip for all of them (the snapshot create waits for every one).
    const schemaId = probedSchemaId ?? this.readSchemaId(loop);
    const checked = latest !== null ? this.baseCheck.check(latest, entries) : Promise.resolve();
    checked.catch(() => undefined);
    const { delta, uploaded } = await this.writeDelta(loop, entries);
    await this.writeChangelogOnce(loop);
    const [, , snapshot] = await settleAll([
      checked,
      uploaded,
      this.buildSnapshot(latest, entries, delta.list, loop.writer, loop.input, schemaId, loop.changelogList, loop.prebuilt),
    ]);
    // Built for a snapshot that was not the latest after all: nothing will reference it.
    if (loop.prebuilt !== undefined && loop.prebuilt.forId !== (latest?.id ?? null) && loop.uncertainAfter === null) {
      this.discard(loop.writer, loop.prebuilt.files, loop.discarded);
    }
    loop.prebuilt = undefined;
    const attemptFiles = loop.writer.written.filter((n) => !loop.keep.has(n) && !loop.discarded.has(n));
    const { outcome, behind } = await this.createSnapshot(loop, snapshot, latest, atProbe);
    const done: AttemptDone = { retry, latest, snapshot, entries, outcome, behind, attemptFiles, attemptMs: this.now() - attemptStarted };
    if (outcome === 'created') return this.onCreated(loop, done);
    await this.afterLostAttempt(loop, done);
    return null;
  }

  /**
   * The latest snapshot an attempt builds on, with the latest schema id read in the same round trip
   * and the files written when it was read. The first attempt's probe ran with the in-flight
   * record (its schema id is read later, and `atProbe` is null: the probe ran before the call's checks).
   */
  private async probeForAttempt(
    loop: CommitLoop,
    retry: number,
  ): Promise<{ probe: LatestProbe; schemaId: Promise<number | null> | undefined; atProbe: number | null }> {
    if (retry === 0 && loop.start.probe !== undefined) return { probe: loop.start.probe, schemaId: undefined, atProbe: null };
    const schemaId = this.readSchemaId(loop);
    const probe = await this.readLatest(loop.winner ?? undefined);
    return { probe, schemaId, atProbe: this.loopFilesWritten(loop) };
  }

  /** An earlier attempt with an unknown outcome did land as `own`: the commit is done. */
  private async landedBefore(loop: CommitLoop, own: number): Promise<number> {
    await Promise.all([this.finish(own, loop.start.recordId, loop.input.clearsRecords), this.deleteDiscarded(loop.writer, loop.discarded)]);
    loop.recordCleared = true;
    this.rememberCommitted(loop.input, own);
    return own;
  }

  /** The entries of the snapshot on top of `latest`: computed, re-sequenced by the guard, checked for conflicts. */
  private async attemptEntries(loop: CommitLoop, latest: Snapshot | null): Promise<readonly ManifestEntry[]> {
    const { input, guard } = loop;
    let entries = input.delta.kind === 'fixed' ? input.delta.entries : await input.delta.compute(latest);
    // After an unknown outcome our files may be referenced by a snapshot still in transit:
    // rewriting is still correct (that snapshot cannot land on a newer base), deleting is not.
    if (guard) entries = await guard.apply(latest, entries);
    if (input.checkConflicts) {
      await checkConflicts(this.fileIO, this.paths, latest, entries, {
        allowBucketChange: input.allowBucketChange,
        source: this.cache,
      });
    }
    return entries;
  }

  /**
   * The delta manifests and list of `entries`: those of the last attempt when it had the same
   * entries, else written anew (the last attempt's deleted unless an outcome is unknown). Their
   * uploads finish in `uploaded`.
   */
  private async writeDelta(
    loop: CommitLoop,
    entries: readonly ManifestEntry[],
  ): Promise<{ readonly delta: WrittenDelta; readonly uploaded: Promise<unknown> }> {
    const { writer, keep } = loop;
    const last = loop.delta;
    if (last !== null && sameEntries(last.entries, entries)) return { delta: last, uploaded: Promise.resolve() };
    if (last !== null && loop.uncertainAfter === null) {
      for (const n of [...last.files, last.list.name]) keep.delete(n);
      await writer.deleteWritten([...last.files, last.list.name]);
    }
    const { metas, pending } = await writer.writeEntriesDeferred(entries);
    const list = await writer.writeListDeferred(metas);
    const delta: WrittenDelta = { entries, files: metas.map((m) => m.fileName), list: { name: list.name, size: list.size } };
    loop.delta = delta;
    for (const n of [...delta.files, list.name]) keep.add(n);
    const uploaded = settleAll([pending, list.pending]);
    uploaded.catch(() => undefined);
    return { delta, uploaded };
  }

  /** The changelog is fixed: its manifests are written once and kept across attempts. */
  private async writeChangelogOnce(loop: CommitLoop): Promise<void> {
    const changelog = loop.input.changelog;
    if (loop.changelogList !== undefined || changelog === undefined || changelog.length === 0) return;
    const metas = await loop.writer.writeEntries(changelog);
    loop.changelogList = await loop.writer.writeList(metas);
    for (const n of [...metas.map((m) => m.fileName), loop.changelogList.name]) loop.keep.add(n);
  }

  /**
   * Creates the snapshot, unless its id was found taken first (`behind`: this writer fell behind,
   * it did not collide). An error is an unknown outcome: the snapshot may exist, so every file is
   * kept and the next attempt checks.
   */
  private async createSnapshot(
    loop: CommitLoop,
    snapshot: Snapshot,
    latest: Snapshot | null,
    atProbe: number | null,
  ): Promise<{ outcome: AttemptDone['outcome']; behind: boolean }> {
    try {
      // An attempt that wrote nothing since its probe (a retry on the base list written while
      // backing off) read the absent id a moment ago: a second GET of it would find the same.
      const probedJustNow = atProbe !== null && this.loopFilesWritten(loop) === atProbe;
      loop.winner = probedJustNow ? null : await this.takenMeanwhile(snapshot.id, loop.input.commitUser);
      if (loop.winner !== null) return { outcome: 'already-exists', behind: true };
      return {
        outcome: await this.fileIO.createIfAbsent(this.paths.snapshotPath(snapshot.id), serializeSnapshot(snapshot)),
        behind: false,
      };
    } catch (e) {
      loop.lastError = e;
      loop.uncertainAfter ??= latest?.id ?? 0;
      return { outcome: 'error', behind: false };
    }
  }

  /** The snapshot exists: what this committer knows advances, the in-flight record goes, and so do obsolete files. */
  private async onCreated(loop: CommitLoop, done: AttemptDone): Promise<number> {
    const { input, guard } = loop;
    const { latest, snapshot, entries } = done;
    advanceSequenceMaxima(this.sequenceMaxima, latest, snapshot, entries);
    this.baseCheck.committed(entries);
    this.knowledge.advanceLivePlan(latest, snapshot, entries);
    this.knownLatest = snapshot.id;
    this.created = snapshot;
    this.activity.saw(snapshot.id, input.commitUser);
    this.backoff.succeeded(done.attemptMs);
    this.report(input, done.retry, snapshot.id, done.outcome, done.attemptMs, 0);
    await Promise.all([
      this.finish(snapshot.id, loop.start.recordId, input.clearsRecords),
      this.deleteDiscarded(loop.writer, loop.discarded),
    ]);
    loop.recordCleared = true;
    this.rememberCommitted(input, snapshot.id);
    if (guard && loop.uncertainAfter === null) await this.deleteBestEffort(guard.obsoleteAfter(entries));
    return snapshot.id;
  }

  /**
   * After a lost race or an unknown outcome: gives up when retries or time ran out, else backs
   * off, reading what the winner added meanwhile.
   */
  private async afterLostAttempt(loop: CommitLoop, done: AttemptDone): Promise<void> {
    const { input } = loop;
    const { snapshot, outcome } = done;
    // Another writer created this id: the next probe starts at it (ids are contiguous).
    if (outcome === 'already-exists') this.knownLatest = snapshot.id;
    if (loop.uncertainAfter === null) this.discard(loop.writer, done.attemptFiles, loop.discarded);
    const elapsed = this.now() - loop.started;
    // Falling behind is not a collision: the first commit.max-retries times it costs no retry
    // and no sleep (the catch-up below is all the next attempt needs). Counted as retries, a
    // writer slower than the others used up its retries in a few seconds of catching up.
    const catchUp = done.behind && loop.caughtUp < this.options.maxRetries;
    if (catchUp) loop.caughtUp++;
    else loop.lost++;
    if (loop.lost > this.options.maxRetries || elapsed >= this.options.timeoutMs) {
      this.report(input, done.retry, snapshot.id, outcome, done.attemptMs, 0);
      const why =
        outcome === 'error'
          ? `the last attempt failed: ${(loop.lastError as Error)?.message ?? String(loop.lastError)}`
          : `snapshot ${snapshot.id} was created by another writer`;
      throw new CommitRetryExhaustedError(
        `commit of identifier ${input.identifier} by '${input.commitUser}' to ${this.paths.root} gave up after ${done.retry + 1} attempts in ${elapsed} ms (commit.max-retries = ${this.options.maxRetries}, commit.timeout = ${this.options.timeoutMs} ms); ${why}`,
        { cause: loop.lastError },
      );
    }
    const waitMs = catchUp ? 0 : this.backoff.lost(loop.lost - 1, done.attemptMs, this.activity.others(input.commitUser));
    this.report(input, done.retry, snapshot.id, outcome, done.attemptMs, waitMs);
    const wait = sleep(waitMs);
    // While backing off, read and check what the winner added (its snapshot, manifest lists,
    // manifests and data files): the next attempt then finds it in the cache and the base
    // check's memory, so its window between reading the latest snapshot and creating the
    // next one shrinks to a few round trips. A failure here is left to that attempt to report.
    const warm =
      outcome === 'already-exists' ? this.prefetch(snapshot.id, done.entries, loop.writer, loop.winner) : Promise.resolve(undefined);
    const [, warmed] = await Promise.all([wait, warm]);
    loop.prebuilt = warmed?.base;
    loop.winner = warmed?.winner ?? null;
  }

  /** The loop failed: deletes what it wrote, unless a create with an unknown outcome may yet reference it. */
  private async abandonLoop(loop: CommitLoop): Promise<void> {
    if (loop.uncertainAfter === null) {
      await loop.writer.deleteWritten([...loop.writer.written]);
      if (loop.guard) await this.deleteBestEffort(loop.guard.written);
    } else {
      // Unknown outcome: our files stay, and so does their record (a create still in transit may
      // yet land); orphan cleanup prunes the record after 7 days. Those of attempts lost before
      // it are referenced by no snapshot.
      loop.keepRecord = true;
      await this.deleteDiscarded(loop.writer, loop.discarded);
    }
  }

  private report(
    input: AttemptInput,
    retry: number,
    snapshotId: number,
    outcome: CommitAttemptReport['outcome'],
    attemptMs: number,
    waitMs: number,
  ): void {
    if (this.onAttempt === undefined) return;
    try {
      const { commitUser, identifier } = input;
      this.onAttempt({ commitUser, identifier, retry, snapshotId, outcome, attemptMs, waitMs });
    } catch {
      // A diagnostic hook must not change the commit's outcome.
    }
  }

  /**
   * Reads and checks snapshot `id` ahead of the next attempt, and writes the base list for a
   * snapshot on top of it (used when it is still the latest then): best effort.
   */
  private async prefetch(
    id: number,
    entries: readonly ManifestEntry[],
    writer: ManifestWriter,
    known: Snapshot | null,
  ): Promise<{ base: BaseList | undefined; winner: Snapshot | null }> {
    let s: Snapshot | null = known;
    try {
      // The check before the create read the winner already when it found the id taken.
      s ??= await this.snapshots.tryGet(id);
      if (s === null) return { base: undefined, winner: null };
      this.activity.saw(s.id, s.commitUser);
      const [, base] = await settleAll([this.baseCheck.check(s, entries), this.writeBase(s, writer)]);
      return { base, winner: s };
    } catch {
      return { base: undefined, winner: s }; // the next attempt reads, writes (and reports) for itself
    }
  }

  /**
   * Snapshot `id` when another writer created it while this attempt read and wrote what the
   * snapshot needs, else null (one GET, made only when other writers committed recently; the
   * snapshot read is handed on, so that the catch-up does not read it again). Such an attempt fell
   * behind rather than collided: it catches up at once, without the backoff and, up to
   * `commit.max-retries` times, without using a retry; only a create that loses in the moment
   * after this check is a collision. Alone on a table, it would cost a round trip per commit for
   * nothing.
   */
  private async takenMeanwhile(id: number, commitUser: string): Promise<Snapshot | null> {
    if (this.activity.others(commitUser) === 0) return null;
    let s: Snapshot | null;
    try {
      s = await this.snapshots.tryGet(id);
    } catch {
      return null; // the create answers for itself
    }
    if (s === null) return null;
    this.activity.saw(s.id, s.commitUser);
    return s;
  }

  /**
   * Files of a lost attempt (or an unused base list): its manifest lists are written over by the
   * next lists of the loop, the rest is deleted when the loop ends.
   */
  private discard(writer: ManifestWriter, files: readonly string[], discarded: Set<string>): void {
    for (const n of files) {
      if (n.startsWith('manifest-list-')) writer.recycleList(n);
      else discarded.add(n);
    }
  }

  /** Deletes the files of lost attempts not written over (best effort, as {@link ManifestWriter.deleteWritten}). */
  private async deleteDiscarded(writer: ManifestWriter, discarded: ReadonlySet<string>): Promise<void> {
    const files = [...discarded, ...writer.takeSpareLists()];
    if (files.length > 0) await writer.deleteWritten(files);
  }

  /**
   * The latest schema id. `known`: the id this attempt loop read before; then one HEAD of the id
   * after it (a LIST only when that exists), which an S3 store serves for less CPU than a LIST.
   * Schema ids are created in sequence with create-if-absent, so the next id is the only one that
   * can appear. A rollback that removes schema `known` while the commit runs is a race as it was
   * with a LIST per attempt (the LIST could run just before it).
   */
  private async latestSchemaId(known: number | null): Promise<number | null> {
    if (known === null || (await this.fileIO.exists(this.paths.schemaPath(known + 1)))) return this.schemas.latestId();
    return known;
  }

  /** After the snapshot exists: the LATEST hint and clearing the in-flight records (its own and `others`), together. */
  private async finish(id: number, recordId: string, others: readonly string[] = []): Promise<void> {
    await Promise.all([
      this.writeHints(id),
      this.recordInflight ? this.clearRecord(recordId) : Promise.resolve(),
      ...others.map((other) => this.clearRecord(other)),
    ]);
  }

  /** Deletes files nothing references; a failure only leaves them to orphan cleanup. */
  private async deleteBestEffort(locations: readonly string[]): Promise<void> {
    for (const location of locations) {
      try {
        await this.fileIO.delete(location);
      } catch (e) {
        this.logger.warn(
          `deleting unreferenced file ${location} failed (orphan cleanup removes it): ${(e as Error)?.message ?? String(e)}`,
        );
      }
    }
  }

  /**
   * Locations of the files a dropped compaction wrote: its ADD entries, except files it only moved
   * to another level (also among its inputs) and files of the commit's own new files.
   */
  private compactOutputs(entries: readonly ManifestEntry[], appendEntries: readonly ManifestEntry[]): string[] {
    const keep = new Set([...entries.filter((e) => e.kind === 'DELETE'), ...appendEntries].map((e) => e.file.fileName));
    return entries
      .filter((e) => e.kind === 'ADD' && !e.file.externalPath && !keep.has(e.file.fileName))
      .map((e) => this.paths.dataFilePath(e.partition, e.bucket, e.file.fileName));
  }

  /** Locations of the index files the ADD entries of a dropped change wrote. */
  private indexOutputs(entries: readonly IndexManifestEntry[]): string[] {
    return entries.filter((e) => e.kind === 'ADD').map((e) => this.paths.indexFilePath(e.fileName, e.externalPath));
  }

  /** Locations of changelog files. */
  private changelogPaths(entries: readonly ManifestEntry[]): string[] {
    return entries.filter((e) => !e.file.externalPath).map((e) => this.paths.changelogFilePath(e.partition, e.bucket, e.file.fileName));
  }

  /** Best effort: a record left behind only delays the clean-up of this commit's orphans. */
  private async clearRecord(id: string): Promise<void> {
    try {
      await clearInflightFiles(this.fileIO, this.paths.root, id);
    } catch (e) {
      this.logger.warn(
        `clearing in-flight record ${id} of ${this.paths.root} failed (orphan cleanup removes it after 7 days): ${(e as Error)?.message ?? String(e)}`,
      );
    }
  }

  private rememberCommitted(input: AttemptInput, id: number): void {
    const cached = this.committedCache.get(input.commitUser);
    if (cached !== undefined && cached.scannedTo === id - 1) {
      this.committedCache.set(input.commitUser, { scannedTo: id, identifier: input.identifier, kind: input.commitKind });
    }
  }

  /** Merges the manifests of `latest` and writes them as the next snapshot's base list. */
  private async writeBase(latest: Snapshot | null, writer: ManifestWriter): Promise<BaseList> {
    const before = new Set(writer.written);
    let baseMetas: ManifestFileMeta[] = [];
    if (latest !== null) {
      baseMetas = await mergeManifests(
        this.fileIO,
        this.paths,
        await dataManifests(this.fileIO, this.paths, latest, this.cache),
        writer,
        this.partitionTypes,
        {
          targetFileSize: this.options.manifestTargetFileSize,
          mergeMinCount: this.options.manifestMergeMinCount,
          fullCompactionThresholdSize: this.options.manifestFullCompactionThresholdSize,
        },
        this.cache,
      );
    }
    const list = await writer.writeList(baseMetas);
    // The list may have been written under a recycled name, which `written` holds already.
    const files = writer.written.filter((n) => !before.has(n));
    if (!files.includes(list.name)) files.push(list.name);
    return { forId: latest?.id ?? null, list, files };
  }

  /** Writes the base list (merged manifests of `latest`) and builds the snapshot on top of `latest`. */
  private async buildSnapshot(
    latest: Snapshot | null,
    entries: readonly ManifestEntry[],
    deltaList: { name: string; size: number },
    writer: ManifestWriter,
    input: AttemptInput,
    latestSchemaId: Promise<number | null>,
    changelogList?: { name: string; size: number },
    prebuilt?: BaseList,
  ): Promise<Snapshot> {
    // Index first: a dynamic-bucket conflict fails the attempt before the base list is merged.
    let indexManifest = latest?.indexManifest;
    const index = input.index === undefined ? NO_INDEX_CHANGES : await input.index(latest);
    if (!index.replacesPartitions) {
      await checkDeletionVectorChanges(this.fileIO, this.paths, latest, index.entries, entries, this.bucketUnaware, this.cache);
    }
    const changes = await resolveHashIndexChanges(this.fileIO, this.paths, latest, index, (h) => writer.writeHashIndex(h));
    if (changes.length > 0) {
      const live = combineIndexEntries(await snapshotIndexEntries(this.fileIO, this.paths, latest), changes, this.bucketUnaware);
      indexManifest = live.length === 0 ? undefined : await writer.writeIndexManifest(live);
    }

    const usable = prebuilt !== undefined && prebuilt.forId === (latest?.id ?? null);
    const baseList = usable ? prebuilt.list : (await this.writeBase(latest, writer)).list;

    let deltaRecordCount = 0;
    for (const e of entries) deltaRecordCount += e.kind === 'ADD' ? e.file.rowCount : -e.file.rowCount;
    let previousTotal = 0;
    if (latest !== null) previousTotal = latest.totalRecordCount ?? (await liveRecordCount(this.fileIO, this.paths, latest, this.cache));
    const schemaId = (await latestSchemaId) ?? this.schema.id;

    let watermark = input.watermark;
    if (latest?.watermark !== undefined) watermark = watermark === undefined || latest.watermark > watermark ? latest.watermark : watermark;

    const snapshot: { -readonly [K in keyof Snapshot]: Snapshot[K] } = {
      version: SNAPSHOT_VERSION,
      id: (latest?.id ?? 0) + 1,
      schemaId,
      baseManifestList: baseList.name,
      baseManifestListSize: baseList.size,
      deltaManifestList: deltaList.name,
      deltaManifestListSize: deltaList.size,
      commitUser: input.commitUser,
      commitIdentifier: input.identifier,
      commitKind: input.commitKind,
      timeMillis: this.now(),
      totalRecordCount: previousTotal + deltaRecordCount,
      deltaRecordCount,
      nextRowId: latest?.nextRowId ?? 0,
    };
    if (changelogList !== undefined) {
      snapshot.changelogManifestList = changelogList.name;
      snapshot.changelogManifestListSize = changelogList.size;
      snapshot.changelogRecordCount = (input.changelog ?? []).reduce((n, e) => n + e.file.rowCount, 0);
    }
    if (indexManifest !== undefined) snapshot.indexManifest = indexManifest;
    if (watermark !== undefined) snapshot.watermark = watermark;
    if (latest?.statistics !== undefined && latest.schemaId === schemaId) snapshot.statistics = latest.statistics;
    if (input.properties !== undefined && Object.keys(input.properties).length > 0) snapshot.properties = { ...input.properties };
    return snapshot;
  }

  /** LATEST (and EARLIEST for the first snapshot) hints: best effort, never fail the commit. */
  private async writeHints(id: number): Promise<void> {
    try {
      await this.fileIO.write(this.paths.latestHint, String(id));
      if (id === 1) await this.fileIO.write(this.paths.earliestHint, '1');
    } catch (e) {
      this.logger.warn(
        `snapshot ${id} committed, but updating the LATEST hint in ${this.paths.snapshotDir} failed: ${(e as Error)?.message ?? String(e)}`,
      );
    }
  }

  private checkSpecKeys(spec: Readonly<Record<string, string>>, what: string): void {
    for (const k of Object.keys(spec)) {
      if (!this.schema.partitionKeys.includes(k)) {
        throw new CommitInputError(
          `${what} names '${k}', which is not a partition key of ${this.paths.root} (partition keys: ${this.schema.partitionKeys.join(', ') || 'none'})`,
        );
      }
    }
  }

  private partitionString(partition: Uint8Array): string {
    return this.paths.partitionPath(partition).replace(/\/$/, '');
  }

  /**
   * Spec values are written as in partition directory names (`%2F` for `/`). The default
   * partition name matches NULL only: blank strings share its directory but are other values, and
   * an overwrite of the NULL partition must not take them along.
   */
  private matchesSpec(partition: Uint8Array, spec: Readonly<Record<string, string>>): boolean {
    const keys = this.schema.partitionKeys;
    const raw = partitionValueStrings(keys, this.partitionTypes, this.paths.partitionValues(partition), {
      legacyName: this.context.options.partitionLegacyName,
    });
    const defaultName = this.context.options.partitionDefaultName;
    return Object.entries(spec).every(([k, v]) => {
      const value = raw[keys.indexOf(k)];
      return v === defaultName ? value === null : value === unescapePathName(v);
    });
  }
}

function byIdentifier(a: Committable, b: Committable): number {
  return a.identifier < b.identifier ? -1 : a.identifier > b.identifier ? 1 : 0;
}

function checkUser(user: string): string {
  if (typeof user !== 'string' || user.trim() === '') throw new CommitInputError('commitUser must be a non-empty string');
  return user;
}

/**
 * Why `completesCompaction` cannot finish `identifier`, or null when it can. It finishes an
 * identifier whose APPEND snapshot is `user`'s newest snapshot (or whose COMPACT already landed:
 * skipped then). Anything else would commit a compaction whose data was never committed (a later
 * commit of that data would then be skipped as already committed).
 */
function cannotComplete(
  identifier: bigint,
  user: string,
  appendPart: boolean,
  last: { identifier: bigint; kind: CommitKind | null } | null,
): string | null {
  const refuse = (why: string): string => `completesCompaction: cannot complete the compaction of commit identifier ${identifier}: ${why}`;
  if (appendPart) return refuse('the committable carries more than a compaction (new files, index or changelog files, or no compaction)');
  if (last === null || last.identifier < identifier) {
    return refuse(`commit user '${user}' has not committed it yet (newest: ${last?.identifier ?? 'none'}); commit it whole instead`);
  }
  return null;
}
