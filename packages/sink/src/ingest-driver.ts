/**
 * The checkpointing driver: reads a {@link ReplayableSource}, spreads records over P
 * {@link SinkWriter}s, and every N records (or T ms) takes a checkpoint — prepare the writers'
 * files, make them durable in the checkpoint state, commit. On start it restores from the last
 * complete checkpoint; a bounded source ends with a final checkpoint committed at once.
 *
 * Two modes:
 * - **state store** (default): the commitUser, source offset and pending committables live in a
 *   {@link CheckpointStateStore}; the commitUser is generated once (a UUID) and read back from the
 *   state on every restart.
 * - **self-contained** (`stateStore` omitted): each checkpoint is committed directly, with the
 *   source offset in the snapshot's properties; a restart reads the newest snapshot of the given
 *   `commitUser` to learn where to resume. The commitUser must then be supplied by the caller.
 */
import { DynamicBucketConflictError, openTable, type RowObject, type Table } from '@tidemark/core';
import type { SourceOffset } from './checkpoint-state.js';
import { NO_CRASH, type CrashHook } from './crash-points.js';
import {
  checkedSettings,
  checkRowKindField,
  type CheckpointCompaction,
  type CheckpointInfo,
  type IngestOptions,
  type IngestSettings,
  type IngestSummary,
} from './ingest-options.js';
import { guardedObserver } from './ingest-observer.js';
import { resumePipeline, type PipelineStart } from './ingest-start.js';
import { CheckpointAbandoned, StopClock } from './ingest-stop.js';
import { IngestWriters } from './ingest-writers.js';
import type { SinkCommittable } from './committable.js';
import type { SourceRecord } from './source.js';
import type { CheckpointCommit, SourcePosition } from './sink-committer.js';

export type {
  CheckpointCompaction,
  CheckpointInfo,
  IngestObserver,
  IngestOptions,
  IngestResumeInfo,
  IngestSummary,
} from './ingest-options.js';

/**
 * Runs the pipeline until the bounded source ends (or `signal` aborts). Safe to kill at any
 * moment and run again with the same options: every source record ends up in the table once.
 *
 * Dynamic-bucket tables written by other writers too: a checkpoint whose new keys were placed in
 * buckets by another writer first cannot commit (`DynamicBucketConflictError`). The pipeline then
 * starts over from its last committed checkpoint: the stored checkpoint is dropped, its files
 * deleted, and the source read again from the last committed position (up to
 * `MAX_CONFLICT_RESTARTS` times in one call; a restart after a crash does the same).
 */
export async function runIngest(options: IngestOptions): Promise<IngestSummary> {
  const observer = options.observer === undefined ? undefined : guardedObserver(options.observer);
  const run = observer === undefined ? options : { ...options, observer };
  const stop = new StopClock(options.signal, options.stopTimeoutMs, observer);
  try {
    const summary = await runWithRestarts(run, stop);
    observer?.ended?.({ summary });
    return summary;
  } catch (error) {
    observer?.ended?.({ error });
    throw error;
  } finally {
    stop.dispose();
  }
}

/** {@link runIngestOnce}, started over after each lost dynamic-bucket race (see {@link runIngest}). */
async function runWithRestarts(options: IngestOptions, stop: StopClock): Promise<IngestSummary> {
  let records = 0;
  let checkpoints = 0;
  for (let restart = 0; ; restart++) {
    try {
      const s = await runIngestOnce(options, stop);
      return { ...s, records: records + s.records, checkpoints: checkpoints + s.checkpoints };
    } catch (e) {
      if (!(e instanceof ConflictRestart) || restart >= MAX_CONFLICT_RESTARTS) throw e instanceof ConflictRestart ? e.cause : e;
      records += e.records;
      checkpoints += e.checkpoints;
      options.logger?.warn(
        `checkpoint of ${options.table} lost the race for a new key's bucket; restarting from the last committed checkpoint: ${(e.cause as Error).message}`,
      );
    }
  }
}

/** Times one {@link runIngest} call starts over after a checkpoint lost a dynamic-bucket race. */
export const MAX_CONFLICT_RESTARTS = 10;

/** A checkpoint commit lost a dynamic-bucket race: start over (records/checkpoints done so far). */
class ConflictRestart extends Error {
  constructor(
    readonly records: number,
    readonly checkpoints: number,
    cause: DynamicBucketConflictError,
  ) {
    super(cause.message, { cause });
  }
}

/** One attempt of {@link runIngest}: restore, read the source with checkpoints, commit the rest. */
async function runIngestOnce(options: IngestOptions, stop: StopClock): Promise<IngestSummary> {
  const settings = checkedSettings(options);
  const crash = options.crash ?? NO_CRASH;
  const table = await openIngestTable(options);
  const rowKindField = options.rowKindField;
  const compacted = options.observer?.compacted?.bind(options.observer);
  const writers = new IngestWriters(table, settings, {
    crash,
    ...(rowKindField !== undefined ? { rowKindField } : {}),
    ...(compacted !== undefined ? { onCompaction: compacted } : {}),
  });
  try {
    if (rowKindField !== undefined) checkRowKindField(options.table, table.schema(), rowKindField);
    const start = await resumePipeline(options, table, crash);
    writers.open();
    const owed = await writers.compactLeftoverLevel0();
    options.observer?.resumed?.({
      source: options.source,
      commitUser: start.commitUser,
      offset: start.offset,
      restoredFrom: start.restoredFrom,
      recoveredCheckpoints: start.recovered.length,
    });
    const run = new IngestRun(options, settings, crash, start, writers, owed, stop);
    const stopped = await run.readAndCommit();
    return run.summary(stopped, await table.snapshotManager.latestId());
  } finally {
    await writers.close();
    if (!options.fileIO) await table.close();
  }
}

function openIngestTable(options: IngestOptions): Promise<Table> {
  return openTable(options.table, {
    ...(options.fileIO ? { fileIO: options.fileIO } : {}),
    ...(options.storage ? { storage: options.storage } : {}),
  });
}

/**
 * The reading and checkpointing of one run, from the position the restore found: every N records
 * (or T ms) the writers prepare their files, the committer makes them durable and commits them.
 */
class IngestRun {
  private records = 0;
  private checkpoints = 0;
  private sinceCheckpoint = 0;
  private lastCheckpointAt = Date.now();
  private position: SourceOffset;
  /** The source position everything before which is committed. */
  private committed: SourceOffset;
  private nextId: bigint;
  /** The position moved past source data that made no records since the last checkpoint. */
  private moved = false;
  private abandoned: bigint | null = null;

  constructor(
    private readonly options: IngestOptions,
    private readonly settings: IngestSettings,
    private readonly crash: CrashHook,
    private readonly start: PipelineStart,
    private readonly writers: IngestWriters,
    /** The writers hold buckets whose dropped compaction the next checkpoint must redo. */
    private owed: boolean,
    private readonly stop: StopClock,
  ) {
    this.position = start.offset;
    this.committed = start.offset;
    this.nextId = start.nextId;
  }

  /**
   * Reads the source and commits what was read; true when `signal` stopped it. A stop that overran
   * its timeout abandons the checkpoint in progress.
   */
  async readAndCommit(): Promise<boolean> {
    try {
      const stopped = await this.readSource();
      await this.finish(stopped);
      return stopped;
    } catch (e) {
      if (!(e instanceof CheckpointAbandoned)) throw e;
      this.abandoned = e.checkpointId;
      this.options.logger?.warn(
        `${e.message} (${this.options.stopTimeoutMs} ms); the next run of ${this.options.table} resumes from the last committed checkpoint`,
      );
      return true;
    }
  }

  /** Reads the source from the restored position, checkpointing as it goes; true when `signal` stopped it. */
  private async readSource(): Promise<boolean> {
    // The restored position is committed: report it (a Kafka group may lag after a crash).
    if (this.start.restoredFrom !== null) await this.reportCommitted();
    const signal = this.options.signal;
    const records = this.options.source.open(this.start.offset, signal ? { signal } : {})[Symbol.asyncIterator]();
    try {
      for (;;) {
        const next = await this.nextOrIdleCheckpoint(records);
        if (next.done) break;
        const rec = next.value;
        if (rec.positionOnly === true) {
          this.position = rec.offset;
          this.moved = true;
        } else {
          await this.writers.add(rec);
          this.position = rec.offset;
          this.sinceCheckpoint++;
          this.records++;
          this.options.observer?.recordRead?.();
          if (this.checkpointDue()) await this.checkpoint(false);
        }
        if (signal?.aborted) return true;
      }
    } finally {
      await records.return?.();
    }
    // A source ends early when the signal aborts: not the end of a bounded source then.
    return signal?.aborted === true;
  }

  /**
   * The source's next record. With a checkpoint interval, an endless source that goes quiet (a
   * Kafka topic nobody writes to) still gets the records it handed out committed once the interval
   * passed: the checkpoint runs while the source waits (its next record, when it comes, is not yet
   * part of the position).
   */
  private async nextOrIdleCheckpoint(records: AsyncIterator<SourceRecord<RowObject>>): Promise<IteratorResult<SourceRecord<RowObject>>> {
    const interval = this.options.checkpointIntervalMs;
    const next = records.next();
    // A checkpoint below may fail while `next` is pending: its own failure then surfaces nowhere else.
    next.catch(() => undefined);
    while (interval !== undefined && (this.sinceCheckpoint > 0 || this.moved) && !this.options.source.bounded) {
      let timer: NodeJS.Timeout | undefined;
      const tick = new Promise<'tick'>(
        (resolve) => (timer = setTimeout(resolve, Math.max(0, this.lastCheckpointAt + interval - Date.now()), 'tick')),
      );
      const first = await Promise.race([next, tick]);
      clearTimeout(timer);
      if (first !== 'tick') return first;
      await this.checkpoint(false);
    }
    return next;
  }

  private checkpointDue(): boolean {
    const interval = this.options.checkpointIntervalMs;
    return this.sinceCheckpoint >= this.settings.every || (interval !== undefined && Date.now() - this.lastCheckpointAt >= interval);
  }

  /**
   * Commits the records read since the last checkpoint. A compaction dropped at the last
   * checkpoint is redone before the pipeline ends (a few tries while concurrent compactions keep
   * winning; the table stays readable by merge in any case).
   */
  private async finish(stopped: boolean): Promise<void> {
    const done = !stopped && this.options.source.bounded;
    if (this.sinceCheckpoint > 0 || this.moved) await this.checkpoint(done);
    for (let extra = 0; this.owed && extra < 3; extra++) await this.checkpoint(done);
  }

  /** Takes checkpoint `nextId`: prepare the writers' files, make them durable, commit them. */
  private async checkpoint(done: boolean): Promise<void> {
    const id = this.nextId++;
    const started = Date.now();
    const committer = this.start.committer;
    await this.abandonIfOverdue(id);
    const prepared = await this.writers.prepare(id, (c) => committer.add(c));
    const prepareMs = Date.now() - started;
    this.crash.hit('after-prepare-commit');
    await this.abandonIfOverdue(id);
    const commits = await this.commit(id, { id: this.options.source.id, offset: this.position, done });
    this.checkpoints++;
    this.committed = this.position;
    await this.afterCommit(commits, prepared);
    await this.reportCommitted();
    const info: CheckpointInfo = {
      checkpointId: id,
      records: this.sinceCheckpoint,
      offset: this.position,
      commits,
      durationMs: Date.now() - started,
      prepareMs,
      compaction: compactionOf(prepared, commits),
    };
    this.options.onCheckpoint?.(info);
    this.options.observer?.checkpointCommitted?.(info);
    this.sinceCheckpoint = 0;
    this.moved = false;
    this.lastCheckpointAt = Date.now();
  }

  /**
   * Past the stop timeout, before checkpoint `id`'s state is durable: deletes its files (written
   * or prepared) and abandons it. Its records are read again by the next run.
   */
  private async abandonIfOverdue(id: bigint): Promise<void> {
    if (!this.stop.overdue) return;
    await this.writers.abort();
    await this.start.committer.discardPending(id);
    throw new CheckpointAbandoned(id);
  }

  /** Makes checkpoint `id` durable in the state store (or directly in the table) and commits it. */
  private async commit(id: bigint, source: SourcePosition): Promise<CheckpointCommit[]> {
    const { committer } = this.start;
    const store = this.options.stateStore;
    try {
      if (store === undefined) return await committer.commitNow(id, source);
      await committer.snapshotState(id, source);
      // Durable: abandoned now, the next run's restore commits it.
      if (this.stop.overdue) throw new CheckpointAbandoned(id);
      const commits = await committer.notifyCheckpointComplete(id);
      await store.prune(id - BigInt(this.options.retainCheckpoints ?? 1)).catch(() => undefined);
      return commits;
    } catch (e) {
      // The restart's restore drops this checkpoint (state store) or resumes after the last
      // committed one (self-contained), and reads its records again.
      if (e instanceof DynamicBucketConflictError) throw new ConflictRestart(this.records - this.sinceCheckpoint, this.checkpoints, e);
      throw e;
    }
  }

  /**
   * The writers' levels no longer match the table when a commit dropped their compaction (a
   * concurrent compaction replaced its inputs) or re-sequenced their files: they would compact
   * files that are not live. Every buffer is empty right after a checkpoint, so fresh writers take
   * over and plan their levels from the latest snapshot.
   */
  private async afterCommit(commits: readonly CheckpointCommit[], prepared: readonly SinkCommittable[]): Promise<void> {
    const committed = commits.flatMap((c) => (c.result.status === 'committed' ? [c.result] : []));
    if (!committed.some((r) => r.compactionDropped !== undefined || (r.resequencedFiles ?? 0) > 0)) {
      // The owed compactions were part of this checkpoint's (committed) compaction.
      this.owed = false;
      return;
    }
    await this.writers.reopen();
    this.owed = false;
    // Tables whose batch reads skip level 0 (deletion vectors) or whose changelog comes from
    // compaction (`lookup`) need the dropped compaction's data compacted: until then the
    // checkpoint's rows are invisible to batch reads, or missing from the changelog. The fresh
    // writers compact those buckets at the next checkpoint, which the end of the source does not
    // skip (see `owed`).
    const dropped = committed.some((r) => r.compactionDropped !== undefined);
    if (dropped && this.writers.level0AtCommit) this.owed = await this.writers.redoCompactions(prepared);
  }

  /** Tells the source what is committed (best effort: a failure is a warning, never a failed checkpoint). */
  private async reportCommitted(): Promise<void> {
    const source = this.options.source;
    if (source.committed === undefined) return;
    try {
      await source.committed(this.position, { table: this.options.table, commitUser: this.start.commitUser });
    } catch (e) {
      this.options.logger?.warn(`source ${source.id}: reporting the committed position failed: ${(e as Error).message}`);
    }
  }

  summary(stopped: boolean, snapshotId: number | null): IngestSummary {
    return {
      status: stopped || !this.options.source.bounded ? 'stopped' : 'source-done',
      abandonedCheckpoint: this.abandoned,
      mode: this.options.stateStore !== undefined ? 'state-store' : 'self-contained',
      commitUser: this.start.commitUser,
      restoredFrom: this.start.restoredFrom,
      recoveredCheckpoints: this.start.recovered.length,
      records: this.records,
      checkpoints: this.checkpoints,
      lastCheckpointId: this.start.committer.lastCommittedCheckpoint,
      offset: this.committed,
      snapshotId,
    };
  }
}

/** The compactions the writers carried into a checkpoint, and whether its commit dropped them. */
function compactionOf(prepared: readonly SinkCommittable[], commits: readonly CheckpointCommit[]): CheckpointCompaction {
  let buckets = 0;
  let filesBefore = 0;
  let filesAfter = 0;
  for (const m of prepared.flatMap((c) => c.messages)) {
    const before = m.compactBefore?.length ?? 0;
    const after = m.compactAfter?.length ?? 0;
    if (before + after === 0) continue;
    buckets++;
    filesBefore += before;
    filesAfter += after;
  }
  const dropped = commits.some((c) => c.result.status === 'committed' && c.result.compactionDropped !== undefined);
  return { buckets, filesBefore, filesAfter, dropped };
}
