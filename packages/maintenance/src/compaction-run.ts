/**
 * The steps both compactions (append: compact-append.ts, primary-key: compact-primary-key.ts)
 * take around their own rewrite: the check of a `where` option, the plan, progress, the DV index
 * files a run writes, and the COMPACT commit with its answer to a lost race.
 */
import { randomUUID } from 'node:crypto';
import {
  CommitConflictError,
  MaintenanceArgumentError,
  clearInflightFiles,
  parsePredicate,
  predicateColumns,
  recordInflightPrefixes,
  snapshotIndexEntries,
  type CommitMessage,
  type ScanPlan,
  type Table,
} from '@tidemark/core';
import {
  BATCH_COMMIT_IDENTIFIER,
  INDEX_FILE_PREFIX,
  INDEX_TYPE_DELETION_VECTORS,
  type IndexManifestEntry,
  type TableSchema,
} from '@tidemark/format';
import { anyOutputLive, splitByLiveInputs, type CompactionFiles } from './compaction-liveness.js';

/** Progress of a compaction run. */
export interface CompactProgress {
  readonly phase: 'planning' | 'rewriting' | 'committing';
  /** Input files rewritten so far. */
  readonly filesDone: number;
  readonly filesTotal: number;
  readonly bytesRead: number;
  readonly bytesTotal: number;
  readonly bytesWritten: number;
}

/** Why (part of) a run was not committed. */
export interface CompactGaveUp {
  readonly reason: string;
  /** Windows dropped because their inputs were no longer live. */
  readonly windows: number;
  /** New data files deleted again (never referenced by a snapshot). */
  readonly outputFilesDeleted: number;
}

/** Times a lost race is retried without the units whose inputs went. */
const MAX_CONFLICT_RETRIES = 3;

/** The partition filters of both compactions' options. */
export interface CompactionScope {
  readonly partition?: Readonly<Record<string, string>>;
  readonly where?: string;
}

/**
 * Refuses a compaction `where` that names other than partition columns: a compaction rewrites
 * whole buckets, so only whole partitions can be chosen.
 */
export function checkPartitionWhere(schema: TableSchema, where: string | undefined): void {
  if (where === undefined) return;
  const columns = [...predicateColumns(parsePredicate(where, schema.fields))];
  const other = columns.filter((c) => !schema.partitionKeys.includes(c));
  if (other.length > 0) {
    throw new MaintenanceArgumentError(
      `compaction 'where' may name partition columns only (${schema.partitionKeys.join(', ') || 'the table has none'}); ` +
        `it names ${other.join(', ')}`,
    );
  }
}

/** The latest snapshot's splits in the compaction's scope. */
export function planCompaction(table: Table, scope: CompactionScope): Promise<ScanPlan> {
  return table
    .newRead({
      ...(scope.partition !== undefined ? { partition: scope.partition } : {}),
      ...(scope.where !== undefined ? { where: scope.where } : {}),
    })
    .plan();
}

/** Counts a run's progress and reports it to `onProgress`. */
export class CompactionProgress {
  filesDone = 0;
  bytesRead = 0;
  bytesWritten = 0;

  constructor(
    private readonly onProgress: ((progress: CompactProgress) => void) | undefined,
    private readonly filesTotal: number,
    private readonly bytesTotal: number,
  ) {}

  /** One input file read. */
  fileRead(fileSize: number): void {
    this.filesDone++;
    this.bytesRead += fileSize;
    this.report('rewriting');
  }

  report(phase: CompactProgress['phase']): void {
    const { filesDone, bytesRead, bytesWritten, filesTotal, bytesTotal } = this;
    this.onProgress?.({ phase, filesDone, bytesRead, bytesWritten, filesTotal, bytesTotal });
  }
}

/** The DV entries of a snapshot's index manifest (none without a snapshot). */
export async function deletionVectorEntries(table: Table, snapshotId: number | null): Promise<IndexManifestEntry[]> {
  if (snapshotId === null) return [];
  const entries = await snapshotIndexEntries(table.fileIO, table.paths, await table.snapshotManager.snapshot(snapshotId));
  return entries.filter((e) => e.indexType === INDEX_TYPE_DELETION_VECTORS);
}

/**
 * DV index files a compaction run writes (`index-<uuid>-<n>`), recorded in flight from the first
 * one on, so that orphan cleanup leaves them alone until the commit is decided.
 */
export interface RunIndexFiles {
  write(bytes: Uint8Array): Promise<string>;
  /** Deletes the files written (when nothing committed them). */
  discard(): Promise<void>;
  /** Clears the in-flight record. */
  release(): Promise<void>;
}

export function runIndexFiles(table: Table): RunIndexFiles {
  const uuid = randomUUID();
  const prefix = `${INDEX_FILE_PREFIX}${uuid}-`;
  const recordId = `compact-dv-${uuid}`;
  const written: string[] = [];
  let recorded = false;
  return {
    async write(bytes) {
      if (!recorded) {
        await recordInflightPrefixes(table.fileIO, table.location, recordId, [prefix]);
        recorded = true;
      }
      const name = `${prefix}${written.length}`;
      written.push(name);
      await table.fileIO.write(table.paths.indexPath(name), bytes);
      return name;
    },
    async discard() {
      await table.fileIO.deleteMany(written.map((n) => table.paths.indexPath(n))).catch(() => undefined);
    },
    async release() {
      if (recorded) await clearInflightFiles(table.fileIO, table.location, recordId).catch(() => undefined);
    },
  };
}

/** A compaction's units (windows, buckets) as its COMPACT commit sees them. */
export interface CompactionUnits<U> {
  messagesOf(units: readonly U[]): CommitMessage[];
  /** The bucket of a unit and the files it read. */
  inputsOf(unit: U): CompactionFiles;
  /** The bucket of a unit and the files it wrote anew. */
  outputsOf(unit: U): CompactionFiles;
  /** Deletes the files the units wrote (never an input). */
  deleteOutputs(units: readonly U[]): Promise<void>;
}

/** What a COMPACT commit did. */
export interface CompactionCommitOutcome<U> {
  /** The COMPACT snapshot, or null when nothing was committed. */
  readonly snapshotId: number | null;
  /** The units in it (none when nothing was committed). */
  readonly committed: readonly U[];
  readonly gaveUp?: CompactGaveUp;
}

function outputCount<U>(units: readonly U[], c: CompactionUnits<U>): number {
  return units.reduce((s, u) => s + c.outputsOf(u).files.length, 0);
}

/**
 * Commits the units; when another commit removed some of their inputs first, the units that read
 * them are dropped (their outputs deleted) and the rest is committed again, up to
 * {@link MAX_CONFLICT_RETRIES} times. On any other failure the outputs are deleted unless a
 * snapshot create with an unknown outcome landed them, and the error is thrown.
 */
export async function commitDroppingLost<U>(
  table: Table,
  commitUser: string,
  units: readonly U[],
  c: CompactionUnits<U>,
): Promise<CompactionCommitOutcome<U>> {
  const commit = table.newCommit({ commitUser });
  let pending = units;
  let dropped = 0;
  let droppedOutputs = 0;
  let lastConflict = '';
  const gaveUp = (): Pick<CompactionCommitOutcome<U>, 'gaveUp'> =>
    dropped > 0 ? { gaveUp: { reason: lastConflict, windows: dropped, outputFilesDeleted: droppedOutputs } } : {};
  for (let attempt = 0; ; attempt++) {
    try {
      const result = await commit.commit({ identifier: BATCH_COMMIT_IDENTIFIER, messages: c.messagesOf(pending) });
      return { snapshotId: result.status === 'committed' ? result.snapshotId : null, committed: pending, ...gaveUp() };
    } catch (e) {
      if (!(e instanceof CommitConflictError) || attempt >= MAX_CONFLICT_RETRIES) {
        // Our files are unreferenced unless a snapshot create had an unknown outcome and landed.
        if (!(await anyOutputLive(table, pending, c.outputsOf))) await c.deleteOutputs(pending);
        throw e;
      }
      lastConflict = e.message;
      const { keep, lost } = await splitByLiveInputs(table, pending, c.inputsOf);
      // A conflict that is not about our inputs (should not happen): give up on everything.
      const drop = lost.length === 0 ? keep : lost;
      dropped += drop.length;
      droppedOutputs += outputCount(drop, c);
      await c.deleteOutputs(drop);
      pending = lost.length === 0 ? [] : keep;
      if (pending.length === 0) return { snapshotId: null, committed: [], ...gaveUp() };
    }
  }
}

/**
 * Commits the units with the DV index files of the run in one attempt: a conflict (another commit
 * changed those vectors or files) gives the whole run up cleanly, since vectors planned against
 * another state cannot be kept per unit. `index` are the run's index files, discarded with the
 * outputs when nothing was committed.
 */
export async function commitAllOrNothing<U>(
  table: Table,
  commitUser: string,
  units: readonly U[],
  c: CompactionUnits<U>,
  index: Pick<RunIndexFiles, 'discard'>,
): Promise<CompactionCommitOutcome<U>> {
  const commit = table.newCommit({ commitUser });
  try {
    const result = await commit.commit({ identifier: BATCH_COMMIT_IDENTIFIER, messages: c.messagesOf(units) });
    return { snapshotId: result.status === 'committed' ? result.snapshotId : null, committed: units };
  } catch (e) {
    if (await anyOutputLive(table, units, c.outputsOf)) throw e;
    const outputs = outputCount(units, c);
    await c.deleteOutputs(units);
    await index.discard();
    if (!(e instanceof CommitConflictError)) throw e;
    return { snapshotId: null, committed: [], gaveUp: { reason: e.message, windows: units.length, outputFilesDeleted: outputs } };
  }
}
