/**
 * `SinkCommitter`: the single committer of a sink pipeline (two-phase commit, as Paimon's Flink
 * committer operator). Phase one: at checkpoint N the writers' committables are collected and
 * {@link SinkCommitter.snapshotState} makes them durable in the checkpoint state (after recording
 * their files as in flight for orphan cleanup). Phase two: {@link SinkCommitter.notifyCheckpointComplete}
 * commits every pending checkpoint ≤ N in order, each as one snapshot with commit identifier = its
 * checkpoint id and the pipeline's commitUser. After a crash, {@link SinkCommitter.restore} commits
 * what the table does not have yet (Paimon's `filterAndCommit`) and skips the rest.
 */
import {
  CommitConflictError,
  DataFileLocator,
  newTableCommit,
  tableContext,
  type TableCommit,
  type TableContext,
  clearInflightFiles,
  inflightRecordId,
  listInflightRecords,
  liveEntries,
  partitionKey,
  recordInflightFiles,
  type CommitAttemptReport,
  type CommitLogger,
  type CommitMessage,
  type CommitResult,
  type Committable,
} from '@tidemark/core';
import type { TableSchema } from '@tidemark/format';
import type { FileIO } from '@tidemark/storage';
import { CHECKPOINT_STATE_VERSION, type CheckpointState, type SourceOffset, type TableIdentity } from './checkpoint-state.js';
import { committableFiles, committableIndexFiles, compactionOutputs, hasCompaction, type SinkCommittable } from './committable.js';
import { NO_CRASH, withSnapshotCrashHook, type CrashHook } from './crash-points.js';
import { DuplicateCommitError, IdentifierRegressionError, MissingDataFileError, SinkUsageError } from './errors.js';
import type { CheckpointStateStore } from './state-store.js';
import { lastSnapshotOf } from './table-identity.js';
import { decodeSinkJson, encodeSinkJson } from './sink-json.js';

/** Snapshot property holding the source position reached by a committed checkpoint. */
export const OFFSETS_PROPERTY = 'tidemark.sink.offsets';
/** Snapshot property holding the checkpoint id (same as `commitIdentifier`, for readability). */
export const CHECKPOINT_PROPERTY = 'tidemark.sink.checkpoint';

/** Source position attached to a checkpoint. */
export interface SourcePosition {
  readonly id: string;
  readonly offset: SourceOffset;
  readonly done: boolean;
}

/** The outcome of committing one checkpoint. */
export interface CheckpointCommit {
  readonly checkpointId: bigint;
  readonly result: CommitResult;
  /** Milliseconds the commit took (including file checks). */
  readonly durationMs: number;
}

/** Settings of the {@link SinkCommitter} of one pipeline. */
export interface SinkCommitterOptions {
  readonly fileIO: FileIO;
  readonly tableLocation: string;
  readonly schema: TableSchema;
  readonly table: TableIdentity;
  readonly commitUser: string;
  /** Where checkpoint states go; omit in self-contained mode (see {@link SinkCommitter.commitNow}). */
  readonly stateStore?: CheckpointStateStore;
  /** Check that every data file exists before committing it (default true). */
  readonly verifyFiles?: boolean;
  readonly crash?: CrashHook;
  readonly logger?: CommitLogger;
  /**
   * Expire snapshots after each commit, as Paimon's committer does (default true; never when the
   * table option `write-only` is `true`). Best effort: a failed run is logged, never fails the commit.
   */
  readonly autoExpire?: boolean;
  /** Clock of the snapshot times (and so of automatic tags and partition expiration); default `Date.now` (tests). */
  readonly now?: () => number;
  /** Called after every snapshot attempt of this committer's commits (metrics: attempts and retries). */
  readonly onCommitAttempt?: (attempt: CommitAttemptReport) => void;
}

interface PendingCheckpoint {
  readonly committables: SinkCommittable[];
  source?: SourcePosition;
  recorded: boolean;
}

function byId(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The single committer of a sink pipeline; see the module comment. */
export class SinkCommitter {
  readonly commitUser: string;
  private readonly io: FileIO;
  private readonly commit: TableCommit;
  private readonly locator: DataFileLocator;
  private readonly context: TableContext;
  private readonly crash: CrashHook;
  private readonly pending = new Map<bigint, PendingCheckpoint>();
  /** Highest checkpoint id this committer knows to be committed (or skipped as empty). */
  private lastCommitted: bigint | null = null;
  /** Highest checkpoint id whose state is durable. */
  private lastDurable: bigint | null = null;

  constructor(private readonly options: SinkCommitterOptions) {
    this.commitUser = options.commitUser;
    this.io = options.fileIO;
    this.crash = options.crash ?? NO_CRASH;
    this.context = tableContext(options.fileIO, options.tableLocation, options.schema, options.logger ? { logger: options.logger } : {});
    const commitContext = { ...this.context, fileIO: withSnapshotCrashHook(options.fileIO, this.crash) };
    // The table's commit path: conditional-write check on S3, then automatic tags, partition and snapshot expiration after each snapshot.
    this.commit = newTableCommit(commitContext, {
      commitUser: this.commitUser,
      ...(options.autoExpire === false ? { expire: false } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.now ? { now: options.now } : {}),
      ...(options.onCommitAttempt ? { onAttempt: options.onCommitAttempt } : {}),
    });
    this.locator = new DataFileLocator(this.context.paths, options.schema);
  }

  /** Checkpoint ids collected but not committed yet, ascending. */
  pendingCheckpoints(): bigint[] {
    return [...this.pending.keys()].sort(byId);
  }

  /** Highest checkpoint id known to be committed. */
  get lastCommittedCheckpoint(): bigint | null {
    return this.lastCommitted;
  }

  /**
   * Collects a writer's committable.
   *
   * @throws DuplicateCommitError when its checkpoint was already committed or the writer already
   *   delivered a committable for it.
   */
  add(committable: SinkCommittable): void {
    const id = committable.checkpointId;
    if (this.lastCommitted !== null && id <= this.lastCommitted) {
      throw new DuplicateCommitError(
        `committable of writer ${committable.writerId} for checkpoint ${id} arrived after checkpoint ${this.lastCommitted} was committed by '${this.commitUser}'; refusing to commit checkpoint ${id}'s files twice`,
      );
    }
    if (this.lastDurable !== null && id <= this.lastDurable) {
      throw new SinkUsageError(`committable for checkpoint ${id} arrived after the state of checkpoint ${this.lastDurable} was taken`);
    }
    let p = this.pending.get(id);
    if (p === undefined) this.pending.set(id, (p = { committables: [], recorded: false }));
    if (p.committables.some((c) => c.writerId === committable.writerId)) {
      throw new DuplicateCommitError(`writer ${committable.writerId} delivered two committables for checkpoint ${id}`);
    }
    p.committables.push(committable);
  }

  /** Records the files of pending checkpoints ≤ `upTo` as in flight (once per checkpoint). */
  private async recordInflight(upTo: bigint, source?: SourcePosition): Promise<void> {
    for (const id of this.pendingCheckpoints()) {
      if (id > upTo) break;
      const p = this.pending.get(id)!;
      if (source !== undefined && p.source === undefined) p.source = source;
      if (p.recorded) continue;
      const files: string[] = [];
      for (const c of p.committables) {
        for (const { message, file } of committableFiles(c)) {
          const rel = this.locator.relativePath(message.partition, message.bucket, file);
          if (rel !== null) files.push(rel);
        }
        for (const f of committableIndexFiles(c)) {
          const rel = this.locator.relativeIndexPath(f);
          if (rel !== null) files.push(rel);
        }
      }
      if (files.length > 0) await recordInflightFiles(this.io, this.options.tableLocation, inflightRecordId(this.commitUser, id), files);
      p.recorded = true;
    }
  }

  /**
   * Phase one of checkpoint `checkpointId`: records the files of every pending checkpoint ≤ it as
   * in flight, then stores the checkpoint state (commitUser, source position, pending
   * committables) atomically. Returns the stored state.
   *
   * @throws SinkUsageError without a state store, or when ids do not increase.
   */
  async snapshotState(checkpointId: bigint, source: SourcePosition): Promise<CheckpointState> {
    const store = this.options.stateStore;
    if (store === undefined)
      throw new SinkUsageError('snapshotState needs a checkpoint state store (use commitNow in self-contained mode)');
    if (this.lastDurable !== null && checkpointId <= this.lastDurable) {
      throw new SinkUsageError(`checkpoint ${checkpointId} is not after the last checkpoint ${this.lastDurable}`);
    }
    await this.recordInflight(checkpointId, source);
    const pending: SinkCommittable[] = [];
    const sources: Array<{ checkpointId: bigint; source: SourcePosition }> = [];
    for (const id of this.pendingCheckpoints()) {
      if (id > checkpointId) break;
      const p = this.pending.get(id)!;
      pending.push(...p.committables);
      if (p.source) sources.push({ checkpointId: id, source: p.source });
    }
    const state: CheckpointState = {
      version: CHECKPOINT_STATE_VERSION,
      checkpointId,
      table: this.options.table,
      commitUser: this.commitUser,
      source: { id: source.id, offset: source.offset, done: source.done },
      pending,
      pendingSources: sources,
      createdAtMs: Date.now(),
    };
    await store.save(state);
    this.lastDurable = checkpointId;
    // A checkpoint without committables still completes: nothing to commit for it.
    if (!this.pending.has(checkpointId)) this.pending.set(checkpointId, { committables: [], source, recorded: true });
    this.crash.hit('after-state-durable');
    return state;
  }

  /**
   * Phase two: commits every pending checkpoint ≤ `checkpointId` whose state is durable, in order
   * (a lost notification is covered by the next one). Clears each one's in-flight record after
   * its snapshot exists.
   *
   * @throws IdentifierRegressionError when the table already has a newer identifier of this commitUser.
   * @throws MissingDataFileError when a data file of a pending checkpoint is gone.
   */
  async notifyCheckpointComplete(checkpointId: bigint): Promise<CheckpointCommit[]> {
    const out: CheckpointCommit[] = [];
    for (const id of this.pendingCheckpoints()) {
      if (id > checkpointId) break;
      if (this.options.stateStore !== undefined && (this.lastDurable === null || id > this.lastDurable)) {
        throw new SinkUsageError(`checkpoint ${id} cannot be committed before its state is durable (call snapshotState first)`);
      }
      out.push(await this.commitPending(id, false));
    }
    return out;
  }

  /**
   * Self-contained mode (no state store): records the in-flight files of pending checkpoints ≤
   * `checkpointId` and commits them at once, storing `source` in the snapshot properties so that a
   * restart resumes from the table itself.
   */
  async commitNow(checkpointId: bigint, source: SourcePosition): Promise<CheckpointCommit[]> {
    if (!this.pending.has(checkpointId)) this.pending.set(checkpointId, { committables: [], recorded: true });
    await this.recordInflight(checkpointId, source);
    const out: CheckpointCommit[] = [];
    for (const id of this.pendingCheckpoints()) {
      if (id > checkpointId) break;
      out.push(await this.commitPending(id, true));
    }
    return out;
  }

  private toCommittable(id: bigint, p: PendingCheckpoint): Committable {
    const messages: CommitMessage[] = [];
    for (const c of [...p.committables].sort((a, b) => a.writerId - b.writerId)) messages.push(...c.messages);
    const properties: Record<string, string> = { [CHECKPOINT_PROPERTY]: id.toString() };
    if (p.source) properties[OFFSETS_PROPERTY] = encodeSinkJson({ source: p.source.id, offset: p.source.offset, done: p.source.done });
    return { identifier: id, messages, properties };
  }

  private async commitPending(id: bigint, force: boolean): Promise<CheckpointCommit> {
    const started = Date.now();
    const p = this.pending.get(id)!;
    const committable = this.toCommittable(id, p);
    if (this.options.verifyFiles ?? true) await this.verifyFilesExist(id, p.committables);
    let result: CommitResult;
    if (committable.messages.length === 0 && !force) {
      result = { status: 'empty' };
    } else {
      result = await this.commitOrDropCompaction(id, committable, p, force);
      if (result.status === 'skipped') {
        throw new IdentifierRegressionError(
          `cannot commit checkpoint ${id}: ${result.reason}. The table is ahead of this pipeline's state (restored from an old checkpoint, or another pipeline uses commitUser '${this.commitUser}'); refusing to drop checkpoint ${id}'s data silently`,
        );
      }
    }
    this.crash.hit('after-snapshot-before-ack');
    if (p.recorded) await clearInflightFiles(this.io, this.options.tableLocation, inflightRecordId(this.commitUser, id));
    this.pending.delete(id);
    this.lastCommitted = id;
    return { checkpointId: id, result, durationMs: Date.now() - started };
  }

  /**
   * Commits a checkpoint. One that carries only a compaction (a writer redoing a dropped one: no
   * new files) has no APPEND snapshot for a conflict to fall back on: when a concurrent commit
   * replaced its inputs (another pipeline compacting the same bucket), the compaction is dropped
   * as after an APPEND (its outputs deleted, `compactionDropped` reported, so the writers redo it)
   * and the checkpoint is recorded by an empty snapshot with its identifier and offsets.
   */
  private async commitOrDropCompaction(id: bigint, committable: Committable, p: PendingCheckpoint, force: boolean): Promise<CommitResult> {
    try {
      return await this.commit.commit(committable, { force });
    } catch (e) {
      const compactionOnly = committable.messages.every(
        (m) =>
          m.newFiles.length === 0 &&
          (m.deletedFiles?.length ?? 0) === 0 &&
          (m.newChangelogFiles?.length ?? 0) === 0 &&
          (m.newIndexFiles?.length ?? 0) === 0 &&
          (m.deletedIndexFiles?.length ?? 0) === 0,
      );
      if (!(e instanceof CommitConflictError) || !compactionOnly || !p.committables.some(hasCompaction)) throw e;
      this.options.logger?.warn(`dropped the compaction of checkpoint ${id} (commit user '${this.commitUser}'): ${e.message}`);
      await this.discardCompaction(p.committables);
      const recorded = await this.commit.commit({ identifier: id, messages: [], properties: committable.properties }, { force: true });
      return recorded.status === 'committed' ? { ...recorded, compactionDropped: e.message } : recorded;
    }
  }

  private async verifyFilesExist(id: bigint, committables: readonly SinkCommittable[]): Promise<void> {
    const missing: string[] = [];
    const checks: Promise<void>[] = [];
    for (const c of committables) {
      for (const { message, file } of committableFiles(c)) {
        const loc = this.locator.fileLocation(message.partition, message.bucket, file);
        checks.push(this.io.exists(loc).then((ok) => void (ok ? undefined : missing.push(loc))));
      }
      for (const f of committableIndexFiles(c)) {
        const loc = this.locator.indexLocation(f);
        checks.push(this.io.exists(loc).then((ok) => void (ok ? undefined : missing.push(loc))));
      }
    }
    await Promise.all(checks);
    if (missing.length > 0) {
      throw new MissingDataFileError(
        `checkpoint ${id} of commit user '${this.commitUser}' names ${missing.length} data file(s) that do not exist (first: ${missing[0]}); they were deleted after being prepared (by orphan cleanup with a short age window, or by hand). Refusing to commit without them: restore the files, or drop the state and re-ingest from the last committed position`,
        missing,
      );
    }
  }

  /**
   * Restores from `state` after a restart: checks that the table has not moved past the state,
   * commits the pending committables the table does not have yet (skipping those it has), then
   * clears every in-flight record of this commitUser (records of checkpoints whose state never
   * became durable are released to orphan cleanup).
   *
   * @throws IdentifierRegressionError when the table holds a newer identifier of this commitUser
   *   than the state's checkpoint id.
   * @throws DuplicateCommitError when a pending file is already live in the table under another commit.
   * @throws MissingDataFileError when a pending data file is gone.
   */
  async restore(state: CheckpointState): Promise<CheckpointCommit[]> {
    if (state.commitUser !== this.commitUser) {
      throw new SinkUsageError(
        `state of checkpoint ${state.checkpointId} belongs to commit user '${state.commitUser}', not '${this.commitUser}'`,
      );
    }
    const last = await lastSnapshotOf(this.io, this.options.tableLocation, this.commitUser);
    if (last !== null && last.commitIdentifier > state.checkpointId) {
      throw new IdentifierRegressionError(
        `the table's snapshot ${last.id} was committed by '${this.commitUser}' with identifier ${last.commitIdentifier}, newer than the latest checkpoint state ${state.checkpointId}: the state is older than the table (restored from an old checkpoint?). Resuming would re-read source data that is already committed`,
      );
    }
    const lastId = last?.commitIdentifier ?? null;
    const groups = new Map<bigint, SinkCommittable[]>();
    for (const c of state.pending) {
      if (c.checkpointId > state.checkpointId)
        throw new SinkUsageError(`state ${state.checkpointId} holds a committable of a later checkpoint ${c.checkpointId}`);
      const g = groups.get(c.checkpointId) ?? [];
      g.push(c);
      groups.set(c.checkpointId, g);
    }
    const sources = new Map<bigint, SourcePosition>();
    for (const s of state.pendingSources ?? []) sources.set(s.checkpointId, s.source);
    const todo = [...groups.keys()].filter((id) => lastId === null || id > lastId).sort(byId);
    await this.checkNotLive(todo.flatMap((id) => groups.get(id)!));
    // The pipeline stopped between the APPEND and the COMPACT snapshot of its last checkpoint.
    if (last !== null && last.commitKind !== 'COMPACT') {
      const id = last.commitIdentifier;
      const committables = (groups.get(id) ?? []).filter(hasCompaction);
      if (committables.length > 0) await this.completeCompaction(id, committables, sources.get(id));
    }
    this.lastDurable = state.checkpointId;
    if (lastId !== null) this.lastCommitted = lastId;
    const out: CheckpointCommit[] = [];
    for (const id of todo) {
      const src = sources.get(id);
      this.pending.set(id, { committables: groups.get(id)!, ...(src ? { source: src } : {}), recorded: true });
      out.push(await this.commitPending(id, false));
    }
    if (this.lastCommitted === null || this.lastCommitted < state.checkpointId) this.lastCommitted = state.checkpointId;
    await this.clearOwnInflightRecords();
    return out;
  }

  /**
   * Self-contained restore: continues after the last checkpoint this commitUser committed.
   * Clears in-flight records of this commitUser (their files were never committed).
   */
  async restoreFromTable(): Promise<{ checkpointId: bigint | null; source: SourcePosition | null }> {
    const last = await lastSnapshotOf(this.io, this.options.tableLocation, this.commitUser);
    await this.clearOwnInflightRecords();
    if (last === null) return { checkpointId: null, source: null };
    this.lastCommitted = last.commitIdentifier;
    this.lastDurable = last.commitIdentifier;
    const raw = last.properties?.[OFFSETS_PROPERTY];
    if (raw === undefined) return { checkpointId: last.commitIdentifier, source: null };
    const v = decodeSinkJson(raw, `snapshot ${last.id} property '${OFFSETS_PROPERTY}'`) as {
      source: string;
      offset: SourceOffset;
      done: boolean;
    };
    return { checkpointId: last.commitIdentifier, source: { id: v.source, offset: v.offset, done: v.done } };
  }

  /**
   * Deletes the data and index files of the committables in `state` of checkpoints after
   * `committedUpTo` (this commitUser's last committed identifier, or null): a checkpoint that can
   * never commit (its new keys lost their buckets to another writer) leaves nothing behind. Best
   * effort: a file that cannot be deleted is left to orphan cleanup. Returns how many were deleted.
   */
  async discardUncommitted(state: CheckpointState, committedUpTo: bigint | null): Promise<number> {
    return this.deleteFilesOf(state.pending.filter((c) => committedUpTo === null || c.checkpointId > committedUpTo));
  }

  /**
   * Forgets pending checkpoint `checkpointId`, whose state is not durable, and deletes its files
   * (a checkpoint abandoned by a stop that took too long). Best effort, as {@link discardUncommitted}.
   *
   * @throws SinkUsageError when its state is durable (the next restore commits it then).
   */
  async discardPending(checkpointId: bigint): Promise<number> {
    const p = this.pending.get(checkpointId);
    if (p === undefined) return 0;
    if (this.lastDurable !== null && checkpointId <= this.lastDurable) {
      throw new SinkUsageError(`checkpoint ${checkpointId} is durable; the next restore commits it`);
    }
    this.pending.delete(checkpointId);
    return this.deleteFilesOf(p.committables);
  }

  private async deleteFilesOf(committables: readonly SinkCommittable[]): Promise<number> {
    const locations: string[] = [];
    for (const c of committables) {
      for (const { message, file } of committableFiles(c))
        locations.push(this.locator.fileLocation(message.partition, message.bucket, file));
      for (const f of committableIndexFiles(c)) locations.push(this.locator.indexLocation(f));
    }
    let deleted = 0;
    for (const location of locations) {
      try {
        await this.io.delete(location);
        deleted++;
      } catch (e) {
        this.options.logger?.warn(
          `deleting ${location} of a dropped checkpoint failed (orphan cleanup removes it): ${(e as Error)?.message ?? String(e)}`,
        );
      }
    }
    return deleted;
  }

  /**
   * Commits the compaction of checkpoint `id`, whose APPEND snapshot is committed, as its COMPACT
   * snapshot: a deletion-vector table's rows are invisible to batch reads until it is, and a
   * `lookup` changelog belongs to it. When its files are gone or a concurrent compaction replaced
   * its inputs meanwhile, it is dropped instead (compaction is optional; its outputs are deleted).
   */
  private async completeCompaction(id: bigint, committables: readonly SinkCommittable[], source?: SourcePosition): Promise<void> {
    const messages: CommitMessage[] = [];
    for (const c of [...committables].sort((a, b) => a.writerId - b.writerId)) {
      for (const m of c.messages) {
        messages.push({
          partition: m.partition,
          bucket: m.bucket,
          totalBuckets: m.totalBuckets,
          newFiles: [],
          ...(m.compactBefore ? { compactBefore: m.compactBefore } : {}),
          ...(m.compactAfter ? { compactAfter: m.compactAfter } : {}),
          ...(m.compactChangelogFiles ? { compactChangelogFiles: m.compactChangelogFiles } : {}),
          ...(m.compactNewIndexFiles ? { compactNewIndexFiles: m.compactNewIndexFiles } : {}),
          ...(m.compactDeletedIndexFiles ? { compactDeletedIndexFiles: m.compactDeletedIndexFiles } : {}),
        });
      }
    }
    const outputs = committables.map(compactionOutputs);
    const checks: Array<Promise<boolean>> = [];
    for (const o of outputs) {
      for (const { message, file } of o.files)
        checks.push(this.io.exists(this.locator.fileLocation(message.partition, message.bucket, file)));
      for (const f of o.indexFiles) checks.push(this.io.exists(this.locator.indexLocation(f)));
    }
    let reason: string | null = null;
    if ((await Promise.all(checks)).some((ok) => !ok)) {
      reason = 'some of its output files are gone';
    } else {
      try {
        const p: PendingCheckpoint = { committables: [], recorded: false, ...(source ? { source } : {}) };
        const { properties } = this.toCommittable(id, p);
        const result = await this.commit.commit({ identifier: id, messages, properties }, { completesCompaction: true });
        if (result.status === 'committed') return;
        if (result.status === 'skipped') {
          // This user's snapshots moved on since the restore looked (its COMPACT landed, e.g. from
          // another process with the same commit user): the outputs may be live, so they are
          // left to orphan cleanup, which deletes only unreferenced files.
          this.options.logger?.warn(
            `the compaction of checkpoint ${id} (commit user '${this.commitUser}') was not committed: ${result.reason}`,
          );
          return;
        }
        reason = 'nothing to commit';
      } catch (e) {
        if (!(e instanceof CommitConflictError)) throw e;
        reason = e.message;
      }
    }
    this.options.logger?.warn(`dropped the compaction of checkpoint ${id} (commit user '${this.commitUser}'): ${reason}`);
    await this.discardCompaction(committables);
  }

  /**
   * Deletes what only the compaction part of `committables` wrote (outputs, changelog, deletion
   * vectors); best effort, as a file left behind is an orphan that cleanup removes.
   */
  private async discardCompaction(committables: readonly SinkCommittable[]): Promise<void> {
    const locations: string[] = [];
    for (const c of committables) {
      if (!hasCompaction(c)) continue;
      const { files, indexFiles } = compactionOutputs(c);
      for (const { message, file } of files) locations.push(this.locator.fileLocation(message.partition, message.bucket, file));
      for (const f of indexFiles) locations.push(this.locator.indexLocation(f));
    }
    if (locations.length === 0) return;
    try {
      await this.io.deleteMany(locations);
    } catch (e) {
      this.options.logger?.warn(
        `deleting the ${locations.length} output file(s) of an uncommitted compaction failed (orphan cleanup removes them): ${(e as Error)?.message ?? String(e)}`,
      );
    }
  }

  private async clearOwnInflightRecords(): Promise<void> {
    const prefix = `${this.commitUser}-`;
    const ids: string[] = [];
    for await (const r of listInflightRecords(this.io, this.options.tableLocation)) {
      if (r.id.startsWith(prefix) && /^\d+$/.test(r.id.slice(prefix.length))) ids.push(r.id);
    }
    for (const id of ids) await clearInflightFiles(this.io, this.options.tableLocation, id);
  }

  /** Refuses committables whose files are already live in the latest snapshot. */
  private async checkNotLive(committables: readonly SinkCommittable[]): Promise<void> {
    if (committables.length === 0) return;
    const latest = await this.commit.fileStoreCommit.snapshots.latest();
    if (latest === null) return;
    const wanted = new Map<string, bigint>();
    const partitions = new Set<string>();
    for (const c of committables) {
      for (const { message, file } of committableFiles(c)) {
        wanted.set(`${partitionKey(message.partition)}|${message.bucket}|${file.fileName}`, c.checkpointId);
        partitions.add(partitionKey(message.partition));
      }
    }
    const live = await liveEntries(this.io, this.context.paths, latest, (p) => partitions.has(partitionKey(p)));
    for (const e of live.values()) {
      const id = wanted.get(`${partitionKey(e.partition)}|${e.bucket}|${e.file.fileName}`);
      if (id !== undefined) {
        throw new DuplicateCommitError(
          `data file ${e.file.fileName} of pending checkpoint ${id} (commit user '${this.commitUser}') is already live in snapshot ${latest.id} of ${this.options.tableLocation}, committed under a different identifier; refusing to commit it twice (is the checkpoint state shared with another pipeline or edited?)`,
        );
      }
    }
  }
}
