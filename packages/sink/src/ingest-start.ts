/**
 * Where an ingest pipeline resumes: the commit user, the source position everything before which
 * is committed, and the next checkpoint id, from the checkpoint state store (committing what its
 * newest state holds) or, in self-contained mode, from the table's newest snapshot of the commit user.
 */
import { randomUUID } from 'node:crypto';
import { DynamicBucketConflictError, type Table } from '@tidemark/core';
import type { SourceOffset } from './checkpoint-state.js';
import type { CrashHook } from './crash-points.js';
import { CorruptStateError, StateMismatchError } from './errors.js';
import type { IngestOptions } from './ingest-options.js';
import { SinkCommitter, type CheckpointCommit } from './sink-committer.js';
import type { CheckpointStateStore } from './state-store.js';
import { tableFingerprint } from './table-identity.js';

/** Where a pipeline resumes: who commits, from which source position, with which next checkpoint id. */
export interface PipelineStart {
  readonly commitUser: string;
  readonly committer: SinkCommitter;
  readonly offset: SourceOffset;
  readonly nextId: bigint;
  readonly restoredFrom: bigint | null;
  readonly recovered: CheckpointCommit[];
}

/**
 * Restores the pipeline of `options` on `table`: the committer of its commit user, with every
 * checkpoint the previous run left pending committed, and the position to read the source from.
 */
export async function resumePipeline(options: IngestOptions, table: Table, crash: CrashHook): Promise<PipelineStart> {
  const store = options.stateStore;
  const io = table.fileIO;
  const fingerprint = await tableFingerprint(io, table.location);
  const make = (user: string): SinkCommitter =>
    new SinkCommitter({
      fileIO: io,
      tableLocation: table.location,
      schema: table.schema(),
      table: { location: options.table, fingerprint },
      commitUser: user,
      ...(store ? { stateStore: store } : {}),
      crash,
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.observer?.commitAttempt ? { onCommitAttempt: options.observer.commitAttempt.bind(options.observer) } : {}),
    });
  const start =
    store !== undefined ? await startFromStateStore(options, store, fingerprint, make) : await startSelfContained(options, table, make);
  const last = start.committer.lastCommittedCheckpoint;
  return last !== null && start.nextId <= last ? { ...start, nextId: last + 1n } : start;
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
