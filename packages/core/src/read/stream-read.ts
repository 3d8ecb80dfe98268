/**
 * Streaming reads: the changes of each new snapshot, in snapshot order, as Arrow batches with a
 * `_row_kind` column, following Paimon's streaming semantics:
 * - with a changelog producer (`changelog-producer` other than `none`): the files of each
 *   snapshot's changelog manifest list; snapshots without one (COMPACT snapshots under `input`)
 *   produce nothing;
 * - without: the files the delta manifest list of each APPEND snapshot adds, read as written
 *   (primary-key records keep their row kind, so `-U`/`-D` records written by the writer show up;
 *   append tables give `+I`); COMPACT snapshots produce nothing;
 * - OVERWRITE snapshots produce nothing unless `streaming-read-overwrite` is true (then the files
 *   they add, or their changelog).
 *
 * Snapshots that expired while their changelog was kept (`changelog/changelog-<id>`, a changelog
 * retained longer than the snapshots) are read from there: a stream, or a consumer, may start or
 * continue in that range.
 *
 * With a consumer id the progress is kept in `consumer/consumer-<id>` as Paimon keeps it
 * (`nextSnapshot`, the first snapshot not finished), and a later stream with the same id resumes
 * there. Progress point: the stream records `nextSnapshot = S + 1` when the caller asks for the
 * next batch after the last batch of snapshot S (the one flagged `lastOfSnapshot`), before it
 * reads anything of a later snapshot. A snapshot is therefore never skipped, and it is delivered
 * again after a restart only if the process stopped before asking for the batch after its last one
 * (at-least-once per snapshot; see docs/reading.md for exactly-once downstream).
 */
import * as arrow from 'apache-arrow';
import {
  readManifestEntries,
  readManifestList,
  toArrowSchema,
  type CommitKind,
  type ManifestEntry,
  type Snapshot,
  type TableSchema,
} from '@tidemark/format';
import { NotFoundError } from '@tidemark/storage';
import { ChangelogManager } from '../changelog-manager.js';
import { ConsumerManager } from '../consumer-manager.js';
import { StreamStartError } from '../errors.js';
import { parseTimestampMillis } from '../time-travel.js';
import { rowKindToString } from '../write/key-value/row-kind.js';
import { makeBatch } from './arrow-take.js';
import { readDataFile } from './data-file-reader.js';
import type { ReadContext } from './table-read.js';
import { TableRead } from './table-read.js';

/** Name of the row-kind column appended to every change batch. */
export const ROW_KIND_COLUMN = '_row_kind';

/**
 * Where a stream starts (ignored when its consumer has progress, unless
 * `consumer.ignore-progress` is set):
 * - `'earliest'`: the changes of every snapshot from the earliest retained one on;
 * - `'latest'` (default): a full read of the latest snapshot as `+I` rows, then the changes of
 *   every later snapshot (Paimon's `latest-full`);
 * - a snapshot id N: the changes of snapshot N and every later one;
 * - a `Date`, or a timestamp string (ISO-8601, no zone = UTC, or epoch millis as text): the changes
 *   of every snapshot committed at or after that time.
 */
export type StreamStart = 'earliest' | 'latest' | number | Date | string;

/** Options of `Table.newStreamRead`. */
export interface StreamReadOptions {
  /** Where to start (default `'latest'`). */
  readonly from?: StreamStart;
  /** Record progress under this consumer id and resume from it. */
  readonly consumerId?: string;
  /** Wait between looks for a new snapshot (default `continuous.discovery-interval`, 10 s). */
  readonly pollIntervalMs?: number;
  /** Stops the stream (the iterator ends; progress of finished snapshots stays recorded). */
  readonly signal?: AbortSignal;
  /** End after this snapshot (inclusive) instead of waiting for more. */
  readonly to?: number;
  /** End after this many snapshots were consumed (those without changes count too). */
  readonly maxSnapshots?: number;
}

/** One batch of changes. */
export interface ChangeBatch {
  /** Snapshot the changes belong to. */
  readonly snapshotId: number;
  readonly commitKind: CommitKind;
  /** True for the rows of the initial full read of `from: 'latest'`. */
  readonly full: boolean;
  /** The snapshot's columns (in its schema) plus {@link ROW_KIND_COLUMN} (`+I`, `-U`, `+U`, `-D`). */
  readonly batch: arrow.RecordBatch;
  /** Last batch of the snapshot: asking for the next batch records the consumer's progress. */
  readonly lastOfSnapshot: boolean;
}

const KIND_NAMES = [0, 1, 2, 3].map(rowKindToString);

/** A stream of the changes of a table's snapshots; iterate it once with `for await`. */
export class StreamRead implements AsyncIterable<ChangeBatch> {
  private readonly consumers: ConsumerManager;
  private readonly changelogs: ChangelogManager;
  private recorded: number | null = null;
  private started = false;

  constructor(
    private readonly table: ReadContext,
    private readonly options: StreamReadOptions = {},
  ) {
    this.consumers = new ConsumerManager(table.fileIO, table.paths);
    this.changelogs = new ChangelogManager(table.fileIO, table.paths);
    if (options.consumerId !== undefined) this.consumers.consumerPath(options.consumerId);
    const poll = options.pollIntervalMs;
    if (poll !== undefined && (!Number.isFinite(poll) || poll < 0)) {
      throw new StreamStartError(`pollIntervalMs must be a non-negative number of milliseconds, got ${poll}`);
    }
  }

  /** Snapshot id the stream will read next once started (after the full read of `'latest'`). */
  async startingSnapshot(): Promise<{ next: number; full: Snapshot | null }> {
    const sm = this.table.snapshotManager;
    const id = this.options.consumerId;
    if (id !== undefined && !this.table.context.options.consumerIgnoreProgress) {
      const next = await this.consumers.nextSnapshot(id);
      if (next !== null) {
        const earliest = await this.earliestReadable();
        if (earliest !== null && next < earliest) {
          throw new StreamStartError(
            `consumer '${id}' of ${this.table.paths.root} needs snapshot ${next}, which has expired (earliest is ${earliest}); ` +
              `reset it (tidemark consumers reset) or delete it`,
          );
        }
        return { next, full: null };
      }
    }
    const from = this.options.from ?? 'latest';
    if (from === 'latest') {
      const latest = await sm.latest();
      return latest === null ? { next: 1, full: null } : { next: latest.id + 1, full: latest };
    }
    if (from === 'earliest') return { next: (await this.earliestReadable()) ?? 1, full: null };
    if (typeof from === 'number') {
      if (!Number.isSafeInteger(from) || from < 1) throw new StreamStartError(`from: snapshot id must be a positive integer, got ${from}`);
      const earliest = await this.earliestReadable();
      if (earliest !== null && from < earliest) {
        throw new StreamStartError(`from: snapshot ${from} of ${this.table.paths.root} has expired (earliest is ${earliest})`);
      }
      return { next: from, full: null };
    }
    let ms: number;
    try {
      ms = from instanceof Date ? from.getTime() : parseTimestampMillis(from);
    } catch (cause) {
      throw new StreamStartError(`from: '${String(from)}' is neither 'earliest', 'latest', a snapshot id nor a timestamp`, { cause });
    }
    if (!Number.isFinite(ms)) throw new StreamStartError(`from: '${String(from)}' is not a valid timestamp`);
    // The first snapshot committed at or after `ms`: the one after the last one before it (binary search).
    const earliest = await sm.earliest();
    if (earliest === null) return { next: 1, full: null };
    if (earliest.timeMillis >= ms) return { next: await this.firstChangelogAtOrAfter(ms, earliest.id), full: null };
    return { next: (await sm.snapshotAtOrBefore(ms - 1)).id + 1, full: null };
  }

  /**
   * The first kept changelog (ids below `earliestSnapshot`, contiguous) committed at or after `ms`,
   * by binary search; `earliestSnapshot` when there is none.
   */
  private async firstChangelogAtOrAfter(ms: number, earliestSnapshot: number): Promise<number> {
    const first = await this.changelogs.earliestId();
    if (first === null || first >= earliestSnapshot) return earliestSnapshot;
    let lo = first;
    let hi = earliestSnapshot;
    while (lo < hi) {
      const mid = lo + Math.floor((hi - lo) / 2);
      const c = await this.changelogs.tryGet(mid);
      // A changelog expired meanwhile counts as older.
      if (c !== null && c.timeMillis >= ms) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** The earliest id whose changes can be read: the earliest long-lived changelog, else the earliest snapshot. */
  private async earliestReadable(): Promise<number | null> {
    const [changelog, snapshot] = await Promise.all([this.changelogs.earliestId(), this.table.snapshotManager.earliestId()]);
    if (changelog !== null && (snapshot === null || changelog < snapshot)) return changelog;
    return snapshot;
  }

  /** Snapshot `id`, or the changelog kept of it after it expired; null when neither exists (yet). */
  private async snapshotOrChangelog(id: number): Promise<Snapshot | null> {
    const snapshot = await this.table.snapshotManager.tryGet(id);
    if (snapshot !== null) return snapshot;
    // Expiration writes the changelog before it deletes the snapshot.
    return this.changelogs.tryGet(id);
  }

  [Symbol.asyncIterator](): AsyncIterator<ChangeBatch> {
    if (this.started) throw new StreamStartError('a StreamRead can be iterated once; create a new one with table.newStreamRead');
    this.started = true;
    return this.run();
  }

  private async *run(): AsyncGenerator<ChangeBatch> {
    const { signal, to, maxSnapshots } = this.options;
    const poll = this.options.pollIntervalMs ?? this.table.context.options.continuousDiscoveryIntervalMs;
    const start = await this.startingSnapshot();
    const full = start.full;
    let next = start.next;
    let consumed = 0;
    const done = (): boolean =>
      signal?.aborted === true || (to !== undefined && next > to) || (maxSnapshots !== undefined && consumed >= maxSnapshots);
    if (full !== null) {
      yield* this.withLast(this.fullBatches(full), full);
      // The caller asked for more after the full read: it is finished.
      await this.record(next);
      consumed++;
    }
    while (!done()) {
      const snapshot = await this.snapshotOrChangelog(next);
      const expired = async (cause?: unknown): Promise<StreamStartError | null> => {
        const earliest = await this.earliestReadable();
        if (earliest === null || next >= earliest) return null;
        const root = this.table.paths.root;
        return new StreamStartError(`snapshot ${next} of ${root} expired before the stream read it (earliest is ${earliest})`, { cause });
      };
      if (snapshot === null) {
        const e = await expired();
        if (e !== null) throw e;
        await this.record(next);
        await sleep(poll, signal);
        continue;
      }
      // Anything handed out before this snapshot is finished; an empty snapshot needs no record
      // of its own until the stream waits or moves on to changes of a later one.
      const batches = this.changeBatches(snapshot);
      let any = false;
      try {
        for await (const b of this.withLast(batches, snapshot)) {
          if (!any) await this.record(next);
          any = true;
          yield b;
        }
      } catch (err) {
        // The snapshot is being expired, or is a leftover below EARLIEST of an expiration killed
        // mid-batch: its files are gone. Say so rather than name a missing file.
        if (err instanceof NotFoundError) throw (await expired(err)) ?? err;
        throw err;
      }
      next++;
      consumed++;
      if (any) await this.record(next);
    }
    await this.record(next);
  }

  /** Records `nextSnapshot` for the consumer (once per value). */
  private async record(nextSnapshot: number): Promise<void> {
    const id = this.options.consumerId;
    if (id === undefined || this.recorded === nextSnapshot) return;
    await this.consumers.resetConsumer(id, nextSnapshot);
    this.recorded = nextSnapshot;
  }

  /** Wraps batches into {@link ChangeBatch}es, looking one batch ahead to flag the last. */
  private async *withLast(batches: AsyncIterable<{ batch: arrow.RecordBatch; full: boolean }>, s: Snapshot): AsyncGenerator<ChangeBatch> {
    let held: { batch: arrow.RecordBatch; full: boolean } | null = null;
    for await (const b of batches) {
      if (b.batch.numRows === 0) continue;
      if (held !== null) yield { snapshotId: s.id, commitKind: s.commitKind, full: held.full, batch: held.batch, lastOfSnapshot: false };
      held = b;
    }
    if (held !== null) yield { snapshotId: s.id, commitKind: s.commitKind, full: held.full, batch: held.batch, lastOfSnapshot: true };
  }

  private async *fullBatches(s: Snapshot): AsyncGenerator<{ batch: arrow.RecordBatch; full: boolean }> {
    const read = new TableRead(this.table, { snapshotId: s.id });
    for await (const batch of read.batches()) yield { batch: withRowKinds(batch, null), full: true };
  }

  /** The changes of one snapshot, per the table's changelog producer. */
  private async *changeBatches(s: Snapshot): AsyncGenerator<{ batch: arrow.RecordBatch; full: boolean }> {
    const options = this.table.context.options;
    if (s.commitKind === 'OVERWRITE' && !options.streamingReadOverwrite) return;
    const producer = options.changelogProducer;
    const list = producer !== 'none' ? s.changelogManifestList : s.commitKind !== 'COMPACT' ? s.deltaManifestList : undefined;
    if (!list) return;
    const schema = await this.table.schemaManager.schema(s.schemaId);
    for await (const e of addedEntries(this.table, list)) {
      for await (const batch of readEntry(this.table, schema, e)) yield { batch, full: false };
    }
  }
}

/** The ADD entries of the manifests of manifest list `list`. */
async function* addedEntries(table: ReadContext, list: string): AsyncGenerator<ManifestEntry> {
  for (const m of await readManifestList(table.fileIO, table.paths.manifestPath(list))) {
    if (m.numAddedFiles === 0) continue;
    for await (const e of readManifestEntries(table.fileIO, table.paths.manifestPath(m.fileName))) if (e.kind === 'ADD') yield e;
  }
}

/** Rows of one data or changelog file with their row kinds, in the columns of `schema`. */
async function* readEntry(table: ReadContext, schema: TableSchema, e: ManifestEntry): AsyncGenerator<arrow.RecordBatch> {
  const fileSchema = await table.schemaManager.schema(e.file.schemaId);
  const path = table.context.paths.dataFilePath(e.partition, e.bucket, e.file.fileName, e.file.externalPath);
  const keyValue = schema.primaryKeys.length > 0;
  for await (const b of readDataFile(table.fileIO, { path, fileSize: e.file.fileSize, schema: fileSchema }, schema.fields, { keyValue })) {
    yield withRowKinds(b.batch, b.valueKind);
  }
}

/** Appends {@link ROW_KIND_COLUMN}: the given kinds, or `+I` for every row. */
export function withRowKinds(batch: arrow.RecordBatch, kinds: Int8Array | null): arrow.RecordBatch {
  const n = batch.numRows;
  const names: string[] = new Array<string>(n);
  for (let i = 0; i < n; i++) names[i] = KIND_NAMES[kinds === null ? 0 : kinds[i]!]!;
  const column = arrow.vectorFromArray(names, new arrow.Utf8()).data[0]!;
  const field = new arrow.Field(ROW_KIND_COLUMN, new arrow.Utf8(), false);
  const schema = new arrow.Schema([...batch.schema.fields, field], batch.schema.metadata);
  return makeBatch(schema, [...batch.data.children, column], n);
}

/** Waits `ms`, or less when `signal` aborts; never rejects. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** The Arrow schema of change batches of `schema`. */
export function changeBatchSchema(schema: TableSchema): arrow.Schema {
  const base = toArrowSchema(schema.fields);
  return new arrow.Schema([...base.fields, new arrow.Field(ROW_KIND_COLUMN, new arrow.Utf8(), false)], base.metadata);
}
