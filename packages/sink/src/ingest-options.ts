/**
 * The settings of an ingest pipeline ({@link IngestOptions}), what it reports per checkpoint and at
 * the end, and the checks that run before anything is opened.
 */
import type { BucketCompactionReport, CommitAttemptReport, CommitLogger, RowObject } from '@tidemark/core';
import type { TableSchema } from '@tidemark/format';
import type { FileIO, ResolveFileIOOptions } from '@tidemark/storage';
import type { SourceOffset } from './checkpoint-state.js';
import type { CrashHook } from './crash-points.js';
import { SinkUsageError } from './errors.js';
import type { CheckpointCommit } from './sink-committer.js';
import type { ReplayableSource } from './source.js';
import type { CheckpointStateStore } from './state-store.js';

/** Settings of {@link runIngest}. */
export interface IngestOptions {
  /** Table location (path, `file://`, `s3://`). */
  readonly table: string;
  readonly fileIO?: FileIO;
  readonly storage?: ResolveFileIOOptions;
  readonly source: ReplayableSource<RowObject>;
  /** Checkpoint state store; omit for self-contained mode. */
  readonly stateStore?: CheckpointStateStore;
  /** Self-contained mode only: the pipeline's stable commit user (required there, refused otherwise). */
  readonly commitUser?: string;
  /**
   * Self-contained mode only: allow starting from the beginning of the source although the
   * table's first snapshots have expired (so it cannot be proven that `commitUser` never committed).
   */
  readonly startFresh?: boolean;
  /** Records per checkpoint (default 10,000). */
  readonly checkpointEvery?: number;
  /** Also checkpoint when this many ms passed since the last one (checked as records arrive). */
  readonly checkpointIntervalMs?: number;
  /**
   * Number of writers (default 1). Records of a primary-key table go to writers by bucket (see
   * record-router.ts), so the updates of one key keep their source order; append tables are spread
   * round-robin.
   */
  readonly parallelism?: number;
  /**
   * Primary-key tables: the record field holding each record's row kind (`+I`, `-U`, `+U`, `-D`);
   * it is not a column. Without it every record is an upsert (`+I`).
   */
  readonly rowKindField?: string;
  /** Rows handed to a writer per `write` call (default 1,000). */
  readonly batchSize?: number;
  /** Checkpoint states kept besides the latest (default 1). */
  readonly retainCheckpoints?: number;
  readonly crash?: CrashHook;
  readonly logger?: CommitLogger;
  /** Called after each checkpoint is committed. */
  readonly onCheckpoint?: (info: CheckpointInfo) => void;
  /**
   * Stops reading when aborted (the source's iteration ends, see {@link ReplayableSource.open}), then
   * checkpoints what was read and returns with status `stopped`.
   */
  readonly signal?: AbortSignal;
  /**
   * After `signal` aborts, how long (ms) the last checkpoint may take. Past it the checkpoint is
   * abandoned at its next step: files not yet in a durable checkpoint state are deleted, a state
   * already durable is left for the next run to commit; the summary names the checkpoint
   * (`abandonedCheckpoint`). A step that is waiting on storage finishes first. Default: no limit.
   */
  readonly stopTimeoutMs?: number;
  /** Told what the pipeline does as it runs (metrics, health; see {@link IngestMetrics}). */
  readonly observer?: IngestObserver;
}

/** What a running pipeline reports to its {@link IngestOptions.observer}; every method is optional and must not throw. */
export interface IngestObserver {
  /** The restore is done and reading starts (again, after a restart of {@link runIngest}). */
  resumed?(info: IngestResumeInfo): void;
  /** A record was read from the source. */
  recordRead?(): void;
  /** A checkpoint was committed. */
  checkpointCommitted?(info: CheckpointInfo): void;
  /** One snapshot attempt of a commit (of a checkpoint or of the restore). */
  commitAttempt?(attempt: CommitAttemptReport): void;
  /**
   * A writer finished a compaction of one of its buckets (primary-key tables; it ran in the
   * background while the writer wrote, or at a checkpoint). Reported when it finishes, before
   * the checkpoint that carries it commits, or is abandoned.
   */
  compacted?(report: BucketCompactionReport): void;
  /** The stop signal aborted: the pipeline checkpoints what it read and ends. */
  stopping?(): void;
  /** The run ended, with its summary or the error it failed with. */
  ended?(outcome: { readonly summary: IngestSummary } | { readonly error: unknown }): void;
}

/** Where a pipeline resumes reading, as reported to {@link IngestObserver.resumed}. */
export interface IngestResumeInfo {
  readonly source: ReplayableSource<unknown>;
  readonly commitUser: string;
  /** The source position everything before which is committed. */
  readonly offset: SourceOffset;
  readonly restoredFrom: bigint | null;
  /** Checkpoints the restore committed (left pending by the previous run). */
  readonly recoveredCheckpoints: number;
}

/** What one checkpoint did. */
export interface CheckpointInfo {
  readonly checkpointId: bigint;
  readonly records: number;
  readonly offset: SourceOffset;
  readonly commits: readonly CheckpointCommit[];
  /** Milliseconds from the checkpoint trigger to its commit. */
  readonly durationMs: number;
  /** Of `durationMs`: the writers flushing their files and finishing their compactions. */
  readonly prepareMs: number;
  /** The compactions the writers carried into this checkpoint (primary-key tables). */
  readonly compaction: CheckpointCompaction;
}

/** The writers' compactions in one checkpoint. */
export interface CheckpointCompaction {
  /** (partition, bucket)s compacted. */
  readonly buckets: number;
  /** Files the compactions replaced, and the files they wrote. */
  readonly filesBefore: number;
  readonly filesAfter: number;
  /** The commit dropped the compaction, or part of it (a concurrent compaction replaced its inputs). */
  readonly dropped: boolean;
}

/** Summary of an {@link runIngest} run. */
export interface IngestSummary {
  /** `source-done`: a bounded source was read to its end and everything is committed. `stopped`: aborted. */
  readonly status: 'source-done' | 'stopped';
  /**
   * The checkpoint abandoned because the stop took longer than `stopTimeoutMs` (null when none):
   * the next run reads its records again (or commits it, when its state was already durable).
   */
  readonly abandonedCheckpoint: bigint | null;
  readonly mode: 'state-store' | 'self-contained';
  readonly commitUser: string;
  /** Checkpoint restored from, or null on a fresh start. */
  readonly restoredFrom: bigint | null;
  /** Checkpoints committed during restore (pending from before the crash). */
  readonly recoveredCheckpoints: number;
  /** Records read by this run. */
  readonly records: number;
  /** Checkpoints taken by this run. */
  readonly checkpoints: number;
  /** Last committed checkpoint id (null when none). */
  readonly lastCheckpointId: bigint | null;
  /** Source position everything before which is committed. */
  readonly offset: SourceOffset;
  /** Latest snapshot id of the table afterwards. */
  readonly snapshotId: number | null;
}

/** The pipeline's sizes, with their defaults. */
export interface IngestSettings {
  readonly parallelism: number;
  readonly every: number;
  readonly batchSize: number;
}

/** The pipeline's sizes, with defaults, after checking them and the commit-user mode. */
export function checkedSettings(options: IngestOptions): IngestSettings {
  const parallelism = options.parallelism ?? 1;
  const every = options.checkpointEvery ?? 10_000;
  const batchSize = options.batchSize ?? 1_000;
  if (!Number.isInteger(parallelism) || parallelism < 1)
    throw new SinkUsageError(`parallelism must be a positive integer, got ${parallelism}`);
  if (!Number.isInteger(every) || every < 1) throw new SinkUsageError(`checkpointEvery must be a positive integer, got ${every}`);
  const stopTimeout = options.stopTimeoutMs;
  if (stopTimeout !== undefined && !(stopTimeout >= 0)) throw new SinkUsageError(`stopTimeoutMs must be 0 or more, got ${stopTimeout}`);
  const store = options.stateStore;
  if (store !== undefined && options.commitUser !== undefined) {
    throw new SinkUsageError(
      'commitUser is generated and kept in the checkpoint state; give it only in self-contained mode (no state store)',
    );
  }
  if (store === undefined && (options.commitUser === undefined || options.commitUser.trim() === '')) {
    throw new SinkUsageError(
      "self-contained mode (no state store) needs a stable commitUser: recovery finds the source offset in that user's newest snapshot",
    );
  }
  return { parallelism, every, batchSize };
}

/** A row kind field must name a record field that is not a column, of a primary-key table. */
export function checkRowKindField(location: string, schema: TableSchema, rowKindField: string): void {
  if (schema.primaryKeys.length === 0) {
    throw new SinkUsageError(
      `rowKindField applies to primary-key tables only; ${location} has no primary key (its records are appended as inserts)`,
    );
  }
  if (schema.fields.some((f) => f.name === rowKindField)) {
    throw new SinkUsageError(`rowKindField '${rowKindField}' is a column of ${location}; name a record field that is not a column`);
  }
}
