/**
 * Deleting rows of an append table with `deletion-vectors.enabled` (as Paimon's DELETE does for
 * such tables): the rows matching a predicate are found file by file in the latest snapshot and
 * their positions marked in deletion vectors; no data file is rewritten. The new vectors of a
 * bucket are written with the vectors they extend into new DV index files that replace the old
 * ones, committed as one OVERWRITE snapshot. Bucketed tables keep one DV file per bucket;
 * bucket-unaware tables (`bucket` = -1) rewrite only the DV files holding vectors of the touched
 * data files, rolled at `deletion-vector.index-file.target-size`.
 *
 * A concurrent commit that changed the same vectors makes the commit fail with
 * DeletionVectorConflictError; the delete is then planned again from the new latest snapshot
 * (a few times) so that no deletion is lost.
 */
import { randomUUID } from 'node:crypto';
import type * as arrow from 'apache-arrow';
import { INDEX_FILE_PREFIX, INDEX_TYPE_DELETION_VECTORS, readDeletionVectorsAt, type DeletionVector } from '@tidemark/format';
import type { CommitMessage } from '../commit-message.js';
import { DeletionVectorConflictError, snapshotIndexEntries } from '../commit/index-changes.js';
import { partitionKey } from '../commit/manifest-fold.js';
import type { CommitResult } from '../commit/file-store-commit.js';
import { clearInflightFiles, recordInflightPrefixes } from '../inflight.js';
import { mapOrdered } from '../expire/bounded-map.js';
import { evaluate, type Predicate } from '../predicate.js';
import { makeBatch, takeRows } from '../read/arrow-take.js';
import { valueReader } from '../read/arrow-values.js';
import { readDataFile } from '../read/data-file-reader.js';
import type { PlannedFile } from '../scan/data-split.js';
import type { ReadContext, ReadOptions, TableRead } from '../read/table-read.js';
import type { NewCommitOptions, TableCommit } from '../table-commit.js';
import type { DeletionVectorFilePlan, PartitionRows, RowChangePlan, RowChangeProgress } from '../row-change-plan.js';
import { BucketDvMaintainer } from './bucket-dv-maintainer.js';

/** Attempts before a delete that keeps meeting concurrent DV changes gives up. */
const MAX_ATTEMPTS = 5;
/** Data files a delete scans at once. */
const SCAN_CONCURRENCY = 4;

/** What an append-table delete needs of its table (a `Table` provides it). */
export interface AppendDeleteTable extends ReadContext {
  /** The table directory as given (its in-flight records live there). */
  readonly location: string;
  newRead(options?: ReadOptions): TableRead;
  newCommit(options?: NewCommitOptions): TableCommit;
}

/** Options of {@link deleteFromAppendTable}. */
export interface AppendDeleteOptions extends Pick<NewCommitOptions, 'commitUser' | 'expire'> {
  readonly identifier?: bigint;
  /**
   * Makes the delete an update: called with the matched rows (as they are in the latest snapshot)
   * and a function that commits the vectors' messages together with extra ones; it writes the
   * replacement rows and commits them through that function, so both land in one snapshot. When
   * the commit fails with a conflict it must have deleted the files it wrote (`Table`'s write path
   * does); the update is then planned again.
   */
  readonly replaceWith?: RowReplacement;
  /** Find the rows and return the plan without writing any file (no deletion vector, no data file). */
  readonly dryRun?: boolean;
  /** Called as the data files are scanned and when the commit starts. */
  readonly onProgress?: (progress: RowChangeProgress) => void;
}

/** See {@link AppendDeleteOptions.replaceWith}. */
export type RowReplacement = (
  matched: readonly arrow.RecordBatch[],
  commit: (dataMessages: readonly CommitMessage[]) => Promise<CommitResult>,
) => Promise<CommitResult>;

/** What an append-table delete did: rows marked deleted, the commit (null for a dry run), and the plan it carried out. */
export interface AppendDeleteResult {
  readonly deleted: number;
  readonly result: CommitResult | null;
  readonly plan: RowChangePlan;
}

interface Touched {
  readonly partition: Uint8Array;
  readonly bucket: number;
  readonly totalBuckets: number;
  readonly positions: Map<string, number[]>;
}

/**
 * Marks the rows of `table` (an append table with deletion vectors) for which `predicate` is TRUE
 * deleted (see the module comment).
 *
 * @throws DeletionVectorConflictError after {@link MAX_ATTEMPTS} attempts that all met
 *   concurrent changes of the same vectors.
 */
export async function deleteFromAppendTable(
  table: AppendDeleteTable,
  predicate: Predicate,
  options: AppendDeleteOptions = {},
): Promise<AppendDeleteResult> {
  const uuid = randomUUID();
  const prefix = `${INDEX_FILE_PREFIX}${uuid}-`;
  const recordId = `delete-${uuid}`;
  let counter = 0;
  // Buckets write their files concurrently: the first write records, the others wait for it.
  let recording: Promise<void> | null = null;
  const written: string[] = [];
  const write = async (bytes: Uint8Array): Promise<string> => {
    // Index files of the delete are protected from orphan cleanup until the commit lands.
    recording ??= recordInflightPrefixes(table.fileIO, table.location, recordId, [prefix]);
    await recording;
    const name = `${prefix}${counter++}`;
    written.push(name);
    await table.fileIO.write(table.paths.indexPath(name), bytes);
    return name;
  };
  const o = table.context.options;
  const unaware = o.bucket === -1;
  try {
    for (let attempt = 1; ; attempt++) {
      const latest = await table.snapshotManager.latest();
      if (latest === null) return { deleted: 0, result: options.dryRun ? null : { status: 'empty' }, plan: planOf(table, null, new Map()) };
      const matched: arrow.RecordBatch[] | undefined = options.replaceWith && !options.dryRun ? [] : undefined;
      const touched = await findRows(table, latest.id, predicate, matched, options.onProgress);
      const plan = planOf(table, latest.id, touched);
      const deleted = plan.rowsMatched;
      if (options.dryRun) return { deleted: 0, result: null, plan };
      if (deleted === 0) return { deleted: 0, result: { status: 'empty' }, plan };
      options.onProgress?.({ phase: 'writing', done: 0, unit: 'files' });

      const dvEntries = (await snapshotIndexEntries(table.fileIO, table.context.paths, latest)).filter(
        (e) => e.indexType === INDEX_TYPE_DELETION_VECTORS,
      );
      const attemptFiles = written.length;
      // Buckets are independent: their vectors are read and rewritten concurrently (one round
      // trip for all of them instead of one per bucket).
      const settled = await Promise.allSettled(
        [...touched.values()].map(async (t): Promise<CommitMessage> => {
          const slot = dvEntries.filter((e) => e.bucket === t.bucket && partitionKey(e.partition) === partitionKey(t.partition));
          // Unaware tables: only the DV files holding vectors of the touched files are rewritten.
          const base = unaware ? slot.filter((e) => (e.dvRanges ?? []).some((r) => t.positions.has(r.dataFileName))) : slot;
          const m = await BucketDvMaintainer.restore(table.fileIO, table.context.paths, base, o.deletionVectorsBitmap64);
          for (const [file, positions] of t.positions) for (const p of positions) m.notifyNewDeletion(file, p);
          const inc = await m.prepareCommit(write, false, unaware ? o.deletionVectorIndexFileTargetSize : undefined);
          return {
            partition: t.partition,
            bucket: t.bucket,
            totalBuckets: t.totalBuckets,
            newFiles: [],
            newIndexFiles: inc.newIndexFiles,
            deletedIndexFiles: inc.deletedIndexFiles,
          };
        }),
      );
      // Every bucket has settled before a failure is reported, so no write runs on unobserved.
      const failed = settled.find((r) => r.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
      const messages = settled.map((r) => (r as PromiseFulfilledResult<CommitMessage>).value);
      const commit = table.newCommit({
        ...(options.commitUser !== undefined ? { commitUser: options.commitUser } : {}),
        ...(options.expire !== undefined ? { expire: options.expire } : {}),
      });
      const commitWith = (extra: readonly CommitMessage[]): Promise<CommitResult> =>
        commit.commit({ identifier: options.identifier ?? 9223372036854775807n, messages: [...messages, ...extra] });
      try {
        options.onProgress?.({ phase: 'committing', done: 0, unit: 'files' });
        const result = options.replaceWith ? await options.replaceWith(matched!, commitWith) : await commitWith([]);
        return { deleted: result.status === 'committed' ? deleted : 0, result, plan };
      } catch (e) {
        if (!(e instanceof DeletionVectorConflictError) || attempt >= MAX_ATTEMPTS) throw e;
        // Nothing of the attempt is referenced: plan again from the new latest snapshot.
        const stale = written.splice(attemptFiles);
        await table.fileIO.deleteMany(stale.map((n) => table.paths.indexPath(n))).catch(() => undefined);
      }
    }
  } finally {
    if (recording !== null) await clearInflightFiles(table.fileIO, table.location, recordId).catch(() => undefined);
  }
}

/**
 * Positions of the live rows matching `predicate`, per (partition, bucket) and data file; the
 * matching rows themselves go to `matched` when it is given.
 */
async function findRows(
  table: AppendDeleteTable,
  snapshotId: number,
  predicate: Predicate,
  matched?: arrow.RecordBatch[],
  onProgress?: (progress: RowChangeProgress) => void,
): Promise<Map<string, Touched>> {
  // Planning with the predicate prunes partitions and files by their statistics.
  const plan = await table.newRead({ snapshotId, where: predicate }).plan();
  const out = new Map<string, Touched>();
  const total = plan.splits.reduce((n, s) => n + s.files.length, 0);
  let scanned = 0;
  onProgress?.({ phase: 'scanning', done: 0, total, unit: 'files' });
  // A split's vectors share a DV index file: one ranged read each, not one per data file.
  const vectors = await readDeletionVectorsAt(
    table.fileIO,
    plan.splits.flatMap((split) => split.files.map((f) => split.deletionFiles.get(f.meta.fileName)).filter((r) => r !== undefined)),
  );
  const files = plan.splits.flatMap((split) => split.files.map((file) => ({ split, file })));
  // Files are scanned a few at a time (a delete on an object store would otherwise pay a round
  // trip per file), in plan order so that the matched rows keep it.
  for await (const { split, file, found, hits } of mapOrdered(files, SCAN_CONCURRENCY, async ({ split, file }) => ({
    split,
    file,
    ...(await matchingRows(table, file, vectors.get(file.meta.fileName) ?? null, predicate, matched !== undefined)),
  }))) {
    if (scanned > 0) onProgress?.({ phase: 'scanning', done: scanned, total, unit: 'files' });
    scanned++;
    if (matched) matched.push(...hits);
    if (found.length === 0) continue;
    const key = `${partitionKey(split.partition)}|${split.bucket}`;
    let t = out.get(key);
    if (t === undefined) {
      t = { partition: split.partition, bucket: split.bucket, totalBuckets: split.totalBuckets, positions: new Map() };
      out.set(key, t);
    }
    t.positions.set(file.meta.fileName, found);
  }
  if (total > 0) onProgress?.({ phase: 'scanning', done: total, total, unit: 'files' });
  return out;
}

/** Positions of the live rows of one data file matching `predicate`, and those rows when `keep`. */
async function matchingRows(
  table: AppendDeleteTable,
  file: PlannedFile,
  dv: DeletionVector | null,
  predicate: Predicate,
  keep: boolean,
): Promise<{ found: number[]; hits: arrow.RecordBatch[] }> {
  const fields = table.context.schema.fields;
  const schema =
    file.meta.schemaId === table.context.schema.id ? table.context.schema : await table.schemaManager.schema(file.meta.schemaId);
  const found: number[] = [];
  const hits: arrow.RecordBatch[] = [];
  let position = 0;
  for await (const b of readDataFile(
    table.fileIO,
    { path: file.path, fileSize: file.meta.fileSize, rowCount: file.meta.rowCount, schema },
    fields,
    { keyValue: false },
  )) {
    const readers = new Map<string, (i: number) => unknown>();
    fields.forEach((f, i) => readers.set(f.name, valueReader(b.batch.data.children[i]!, f.type)));
    let row = 0;
    const get = (c: string): unknown => readers.get(c)?.(row) ?? null;
    const rows: number[] = [];
    for (row = 0; row < b.batch.numRows; row++) {
      const pos = position + row;
      if (dv?.isDeleted(pos)) continue;
      if (evaluate(predicate, get) === true) {
        found.push(pos);
        rows.push(row);
      }
    }
    if (keep && rows.length > 0) {
      const columns = b.batch.data.children.map((c) => takeRows(c, rows));
      hits.push(makeBatch(b.batch.schema, columns, rows.length));
    }
    position += b.batch.numRows;
  }
  return { found, hits };
}

/** The figures of a delete from the rows found: per partition, and per data file getting deletion vectors. */
function planOf(table: AppendDeleteTable, baseSnapshotId: number | null, touched: ReadonlyMap<string, Touched>): RowChangePlan {
  const paths = table.context.paths;
  const partitions = new Map<string, { partition: Record<string, string>; rows: number }>();
  const files: Array<DeletionVectorFilePlan & { readonly dir: string }> = [];
  let rowsMatched = 0;
  for (const t of touched.values()) {
    const dir = paths.partitionPath(t.partition);
    const spec = paths.partitionSpec(t.partition);
    let p = partitions.get(dir);
    if (p === undefined) partitions.set(dir, (p = { partition: spec, rows: 0 }));
    for (const [file, positions] of t.positions) {
      p.rows += positions.length;
      rowsMatched += positions.length;
      files.push({ dir, partition: spec, bucket: t.bucket, file, rows: positions.length });
    }
  }
  const byDir = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  files.sort((a, b) => byDir(a.dir, b.dir) || a.bucket - b.bucket || byDir(a.file, b.file));
  const partitionRows: PartitionRows[] = [...partitions.entries()].sort(([a], [b]) => byDir(a, b)).map(([, p]) => p);
  return {
    baseSnapshotId,
    rowsMatched,
    method: 'deletion-vectors',
    partitions: partitionRows,
    deletionVectorFiles: files.map(({ dir: _dir, ...f }) => f),
  };
}
