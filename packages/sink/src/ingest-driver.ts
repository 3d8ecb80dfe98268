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
import { randomUUID } from 'node:crypto';
import {
  DynamicBucketAssigner,
  DynamicBucketConflictError,
  openTable,
  WriteValidationError,
  type CommitLogger,
  type RowObject,
  type Table,
} from '@tidemark/core';
import type { TableSchema } from '@tidemark/format';
import type { FileIO, ResolveFileIOOptions } from '@tidemark/storage';
import type { SourceOffset } from './checkpoint-state.js';
import { NO_CRASH, type CrashHook } from './crash-points.js';
import { CorruptStateError, SinkUsageError, SourceRecordError, StateMismatchError } from './errors.js';
import { SinkCommitter, type CheckpointCommit, type SourcePosition } from './sink-committer.js';
import { SinkWriter } from './sink-writer.js';
import type { SinkCommittable } from './committable.js';
import { bucketWriter, recordRouter, writerBucketAssigner } from './record-router.js';
import { pipelineStartSequence } from './sequence-start.js';
import type { ReplayableSource } from './source.js';
import type { CheckpointStateStore } from './state-store.js';
import { tableFingerprint } from './table-identity.js';

/** Settings of {@link runIngest}. */
export interface IngestOptions {
  /** Table location (path, `file://`, `s3://`). */
  readonly table: string;
  /** Branch to write (default `main`). */
  readonly branch?: string;
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
  /** Stops reading (then checkpoints what was read) when aborted. */
  readonly signal?: AbortSignal;
}

/** What one checkpoint did. */
export interface CheckpointInfo {
  readonly checkpointId: bigint;
  readonly records: number;
  readonly offset: SourceOffset;
  readonly commits: readonly CheckpointCommit[];
  /** Milliseconds from the checkpoint trigger to its commit. */
  readonly durationMs: number;
}

/** Summary of an {@link runIngest} run. */
export interface IngestSummary {
  /** `source-done`: a bounded source was read to its end and everything is committed. `stopped`: aborted. */
  readonly status: 'source-done' | 'stopped';
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
  let records = 0;
  let checkpoints = 0;
  for (let restart = 0; ; restart++) {
    try {
      const s = await runIngestOnce(options);
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

/** The pipeline's sizes, with defaults, after checking them and the commit-user mode. */
function checkedSettings(options: IngestOptions): { parallelism: number; every: number; batchSize: number } {
  const parallelism = options.parallelism ?? 1;
  const every = options.checkpointEvery ?? 10_000;
  const batchSize = options.batchSize ?? 1_000;
  if (!Number.isInteger(parallelism) || parallelism < 1)
    throw new SinkUsageError(`parallelism must be a positive integer, got ${parallelism}`);
  if (!Number.isInteger(every) || every < 1) throw new SinkUsageError(`checkpointEvery must be a positive integer, got ${every}`);
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
function checkRowKindField(location: string, schema: TableSchema, rowKindField: string): void {
  if (schema.primaryKeys.length === 0) {
    throw new SinkUsageError(
      `rowKindField applies to primary-key tables only; ${location} has no primary key (its records are appended as inserts)`,
    );
  }
  if (schema.fields.some((f) => f.name === rowKindField)) {
    throw new SinkUsageError(`rowKindField '${rowKindField}' is a column of ${location}; name a record field that is not a column`);
  }
}

/** Where a pipeline resumes: who commits, from which source position, with which next checkpoint id. */
interface PipelineStart {
  readonly commitUser: string;
  readonly committer: SinkCommitter;
  readonly offset: SourceOffset;
  readonly nextId: bigint;
  readonly restoredFrom: bigint | null;
  readonly recovered: CheckpointCommit[];
}

/**
 * State-store mode: resumes from the newest checkpoint state (committing what it holds), or starts
 * a new commit user when there is none.
 */
async function startFromStateStore(
  options: IngestOptions,
  store: CheckpointStateStore,
  fingerprint: string,
  make: (user: string) => SinkCommitter,
): Promise<PipelineStart> {
  let commitUser: string;
  let committer: SinkCommitter;
  let offset: SourceOffset = null;
  let restoredFrom: bigint | null = null;
  let recovered: CheckpointCommit[] = [];
  const state = await store.latest();
  const highest = await store.highestId();
  if (state === null && highest !== null) {
    throw new CorruptStateError(
      `no checkpoint state in ${store.location} can be decoded, but chk-${highest}.json exists; refusing to start over (that could duplicate committed data)`,
    );
  }
  if (state !== null) {
    if (state.table.fingerprint !== fingerprint) {
      throw new StateMismatchError(
        `checkpoint state ${store.location} (checkpoint ${state.checkpointId}) belongs to table ${state.table.location} (fingerprint ${state.table.fingerprint}), not to ${options.table} (fingerprint ${fingerprint}); use a separate --state location per table`,
      );
    }
    if (state.source.id !== options.source.id) {
      throw new StateMismatchError(
        `checkpoint state ${store.location} belongs to source ${state.source.id}, not ${options.source.id}; use a separate --state location per pipeline`,
      );
    }
    commitUser = state.commitUser;
    committer = make(commitUser);
    try {
      recovered = await committer.restore(state);
      offset = state.source.offset;
      restoredFrom = state.checkpointId;
    } catch (e) {
      if (!(e instanceof DynamicBucketConflictError)) throw e;
      // Another writer placed one of the stored checkpoint's new keys in a bucket first: that
      // checkpoint can never commit as written. Drop it and read its records again from the
      // last committed position; the rewrite plans against the table as it is now.
      committer = make(commitUser);
      const last = await committer.restoreFromTable();
      if (last.checkpointId !== null && last.source === null) {
        throw new StateMismatchError(
          `checkpoint state ${store.location}: a pending checkpoint lost the race for a new key's bucket (${e.message}), and the last snapshot of commit user '${commitUser}' (identifier ${last.checkpointId}) holds no sink offsets to rewind to; re-ingest from a known position into a fresh state location`,
          { cause: e },
        );
      }
      if (last.source !== null && last.source.id !== options.source.id) {
        throw new StateMismatchError(
          `commit user '${commitUser}' ingested source ${last.source.id} into ${options.table}, not ${options.source.id}; use a separate --state location per pipeline`,
        );
      }
      const deleted = await committer.discardUncommitted(state, last.checkpointId);
      options.logger?.warn(
        `dropped the stored checkpoint(s) after ${last.checkpointId ?? 'none'} up to ${state.checkpointId} of ${options.table} (${deleted} file(s) deleted): ${e.message}; re-reading source ${options.source.id} from the last committed position`,
      );
      offset = last.source?.offset ?? null;
      restoredFrom = last.checkpointId;
    }
  } else {
    commitUser = randomUUID();
    committer = make(commitUser);
  }
  const nextId = (highest ?? 0n) + 1n;
  return { commitUser, committer, offset, nextId, restoredFrom, recovered };
}

/** Self-contained mode: resumes after the newest snapshot of the given commit user, found in the table. */
async function startSelfContained(options: IngestOptions, table: Table, make: (user: string) => SinkCommitter): Promise<PipelineStart> {
  let offset: SourceOffset = null;
  let restoredFrom: bigint | null = null;
  let nextId = 1n;
  const commitUser = options.commitUser!;
  const committer = make(commitUser);
  const r = await committer.restoreFromTable();
  if (r.checkpointId !== null) {
    if (r.source === null) {
      throw new StateMismatchError(
        `commit user '${commitUser}' committed identifier ${r.checkpointId} to ${options.table} without sink offsets; use a commit user of its own for this pipeline`,
      );
    }
    if (r.source.id !== options.source.id) {
      throw new StateMismatchError(
        `commit user '${commitUser}' ingested source ${r.source.id} into ${options.table}, not ${options.source.id}; use a commit user per pipeline`,
      );
    }
    offset = r.source.offset;
    restoredFrom = r.checkpointId;
    nextId = r.checkpointId + 1n;
  } else if (!options.startFresh) {
    const earliest = await table.snapshotManager.earliestId();
    if (earliest !== null && earliest > 1) {
      throw new StateMismatchError(
        `no snapshot of commit user '${commitUser}' in ${options.table}, but snapshots before ${earliest} have expired, so an earlier run of this pipeline cannot be ruled out; pass startFresh (--start-fresh) if this is a new pipeline`,
      );
    }
  }
  return { commitUser, committer, offset, nextId, restoredFrom, recovered: [] };
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

async function runIngestOnce(options: IngestOptions): Promise<IngestSummary> {
  const { parallelism, every, batchSize } = checkedSettings(options);
  const store = options.stateStore;
  const crash = options.crash ?? NO_CRASH;
  const table: Table = await openTable(options.table, {
    ...(options.branch !== undefined ? { branch: options.branch } : {}),
    ...(options.fileIO ? { fileIO: options.fileIO } : {}),
    ...(options.storage ? { storage: options.storage } : {}),
  });
  const io = table.fileIO;
  const schema = table.schema();
  const writers: SinkWriter[] = [];
  try {
    const rowKindField = options.rowKindField;
    if (rowKindField !== undefined) checkRowKindField(options.table, schema, rowKindField);
    const fingerprint = await tableFingerprint(io, table.location, table.branch);
    const make = (user: string): SinkCommitter =>
      new SinkCommitter({
        fileIO: io,
        tableLocation: table.location,
        branch: table.branch,
        schema,
        table: { location: options.table, fingerprint },
        commitUser: user,
        ...(store ? { stateStore: store } : {}),
        crash,
        ...(options.logger ? { logger: options.logger } : {}),
      });
    const start =
      store !== undefined ? await startFromStateStore(options, store, fingerprint, make) : await startSelfContained(options, table, make);
    const { commitUser, committer, offset, restoredFrom, recovered } = start;
    let nextId = start.nextId;
    if (committer.lastCommittedCheckpoint !== null && nextId <= committer.lastCommittedCheckpoint)
      nextId = committer.lastCommittedCheckpoint + 1n;

    // Dynamic buckets: one assigner for all writers, so buckets fill to target-row-num across them
    // and each checkpoint commits one index file per bucket.
    const bucketAssigner =
      schema.primaryKeys.length > 0 && table.context.options.bucket === -1
        ? DynamicBucketAssigner.forTable(table.context, 'latest')
        : undefined;
    // The writers plan their sequence numbers and (primary-key tables) their buckets' levels
    // lazily, at their first file: after the restore above committed any pending checkpoint.
    // Records reach writers by bucket (dynamic buckets: the router asks the assigner first), so each
    // bucket has one writer and the writers compact their buckets (unless the table is write-only).
    const openWriters = (): void => {
      const startSequence = pipelineStartSequence(table);
      for (let w = 0; w < parallelism; w++) {
        const writeOptions = {
          crash,
          ...(rowKindField !== undefined ? { rowKindField } : {}),
          ...(startSequence ? { startSequence } : {}),
          ...(bucketAssigner ? { bucketAssigner: writerBucketAssigner(bucketAssigner, w, parallelism) } : {}),
        };
        writers[w] = new SinkWriter(table, w, writeOptions);
      }
    };
    openWriters();
    let owed = false;
    const level0AtCommit = table.context.options.deletionVectorsEnabled || table.context.options.changelogProducer === 'lookup';
    if (level0AtCommit && !table.context.options.writeOnly && schema.primaryKeys.length > 0) {
      // Level-0 files left by a compaction that was dropped before a restart (or by the restore,
      // when its inputs were gone): compacted at the first checkpoint, as after a drop below.
      const writerOf = bucketWriter(schema, parallelism);
      for (const b of await level0Buckets(table)) {
        await writers[writerOf(b.partition, table.context.paths.partitionValues(b.partition), b.bucket)]!.compactBuckets([b]);
        owed = true;
      }
    }
    const buffers: RowObject[][] = writers.map(() => []);
    const route = recordRouter(schema, parallelism, bucketAssigner);
    // Source position of each buffered record, so a bad value is reported where it is in the source.
    const positions: Array<Array<string | undefined>> = writers.map(() => []);
    const flush = async (w: number): Promise<void> => {
      try {
        await writers[w]!.write(buffers[w]!);
      } catch (e) {
        if (!(e instanceof WriteValidationError) || e.rowIndex === undefined) throw e;
        const where = positions[w]![e.rowIndex];
        if (where === undefined) throw e;
        throw new SourceRecordError(`${where}${e.column !== undefined ? `, column '${e.column}'` : ''}: ${e.detail}`, { cause: e });
      }
      buffers[w] = [];
      positions[w] = [];
    };
    let sinceCheckpoint = 0;
    let records = 0;
    let checkpoints = 0;
    let lastCheckpointAt = Date.now();
    let position = offset;
    let stopped = false;
    // `owed` (above): the writers hold buckets whose dropped compaction the next checkpoint must redo.

    const checkpoint = async (done: boolean): Promise<void> => {
      const id = nextId++;
      const started = Date.now();
      for (let w = 0; w < writers.length; w++) {
        if (buffers[w]!.length > 0) await flush(w);
      }
      const prepared: SinkCommittable[] = [];
      for (const w of writers) {
        const c = await w.prepareCommit(id);
        prepared.push(c);
        committer.add(c);
      }
      crash.hit('after-prepare-commit');
      const source: SourcePosition = { id: options.source.id, offset: position, done };
      let commits: CheckpointCommit[];
      try {
        if (store !== undefined) {
          await committer.snapshotState(id, source);
          commits = await committer.notifyCheckpointComplete(id);
          await store.prune(id - BigInt(options.retainCheckpoints ?? 1)).catch(() => undefined);
        } else {
          commits = await committer.commitNow(id, source);
        }
      } catch (e) {
        // The restart's restore drops this checkpoint (state store) or resumes after the last
        // committed one (self-contained), and reads its records again.
        if (e instanceof DynamicBucketConflictError) throw new ConflictRestart(records - sinceCheckpoint, checkpoints, e);
        throw e;
      }
      checkpoints++;
      // The writers' levels no longer match the table when a commit dropped their compaction (a
      // concurrent compaction replaced its inputs) or re-sequenced their files: they would compact
      // files that are not live. Every buffer is empty right after a checkpoint, so fresh writers
      // take over and plan their levels from the latest snapshot.
      if (
        commits.some(
          (c) => c.result.status === 'committed' && (c.result.compactionDropped !== undefined || (c.result.resequencedFiles ?? 0) > 0),
        )
      ) {
        for (const w of writers) await w.close();
        openWriters();
        owed = false;
        // Tables whose batch reads skip level 0 (deletion vectors) or whose changelog comes from
        // compaction (`lookup`) need the dropped compaction's data compacted: until then the
        // checkpoint's rows are invisible to batch reads, or missing from the changelog. The
        // fresh writers compact those buckets at the next checkpoint, which the end of the
        // source does not skip (see `owed`).
        const dropped = commits.some((c) => c.result.status === 'committed' && c.result.compactionDropped !== undefined);
        if (dropped && level0AtCommit) {
          for (const c of prepared) {
            const buckets = c.messages.filter((m) => (m.compactBefore?.length ?? 0) > 0 || (m.compactAfter?.length ?? 0) > 0);
            if (buckets.length === 0) continue;
            await writers[c.writerId]!.compactBuckets(buckets);
            owed = true;
          }
        }
      } else {
        // The owed compactions were part of this checkpoint's (committed) compaction.
        owed = false;
      }
      options.onCheckpoint?.({ checkpointId: id, records: sinceCheckpoint, offset: position, commits, durationMs: Date.now() - started });
      sinceCheckpoint = 0;
      lastCheckpointAt = Date.now();
    };

    for await (const rec of options.source.open(offset)) {
      const routed = route(rec.value);
      const w = typeof routed === 'number' ? routed : await routed;
      buffers[w]!.push(rec.value);
      positions[w]!.push(rec.position);
      position = rec.offset;
      sinceCheckpoint++;
      records++;
      if (buffers[w]!.length >= batchSize) await flush(w);
      if (
        sinceCheckpoint >= every ||
        (options.checkpointIntervalMs !== undefined && Date.now() - lastCheckpointAt >= options.checkpointIntervalMs)
      ) {
        await checkpoint(false);
      }
      if (options.signal?.aborted) {
        stopped = true;
        break;
      }
    }
    if (sinceCheckpoint > 0) await checkpoint(!stopped && options.source.bounded);
    // A compaction dropped at the last checkpoint is redone before the pipeline ends (a few tries
    // while concurrent compactions keep winning; the table stays readable by merge in any case).
    for (let extra = 0; owed && extra < 3; extra++) await checkpoint(!stopped && options.source.bounded);
    return {
      status: stopped || !options.source.bounded ? 'stopped' : 'source-done',
      mode: store !== undefined ? 'state-store' : 'self-contained',
      commitUser,
      restoredFrom,
      recoveredCheckpoints: recovered.length,
      records,
      checkpoints,
      lastCheckpointId: committer.lastCommittedCheckpoint,
      offset: position,
      snapshotId: await table.snapshotManager.latestId(),
    };
  } finally {
    for (const w of writers) await w.close().catch(() => undefined);
    if (!options.fileIO) await table.close();
  }
}

/** (partition, bucket)s of the latest snapshot that hold level-0 files. */
async function level0Buckets(table: Table): Promise<Array<{ partition: Uint8Array; bucket: number }>> {
  const out: Array<{ partition: Uint8Array; bucket: number }> = [];
  for (const split of (await table.newRead().plan()).splits) {
    if (split.files.some((f) => f.meta.level === 0)) out.push({ partition: split.partition, bucket: split.bucket });
  }
  return out;
}
