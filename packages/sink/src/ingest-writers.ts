/**
 * The P writers of an ingest pipeline with their row buffers: records reach a writer by bucket
 * (dynamic buckets: the router asks the pipeline's one assigner first), so each bucket has one
 * writer and the writers compact their buckets (unless the table is write-only).
 */
import { DynamicBucketAssigner, WriteValidationError, type BucketCompactionReport, type RowObject, type Table } from '@tidemark/core';
import type { SinkCommittable } from './committable.js';
import type { CrashHook } from './crash-points.js';
import { SourceRecordError } from './errors.js';
import type { IngestSettings } from './ingest-options.js';
import { bucketWriter, recordRouter, writerBucketAssigner, type RecordRoute } from './record-router.js';
import { pipelineStartSequence } from './sequence-start.js';
import { SinkWriter } from './sink-writer.js';
import type { SourceRecord } from './source.js';

/** What the writers need besides the table and the pipeline's sizes. */
export interface IngestWritersOptions {
  readonly crash: CrashHook;
  readonly rowKindField?: string;
  /** Told of each compaction a writer finished (metrics). */
  readonly onCompaction?: (report: BucketCompactionReport) => void;
}

/** The writers of one pipeline run; see the module comment. */
export class IngestWriters {
  private readonly writers: SinkWriter[] = [];
  private buffers: RowObject[][] = [];
  /** Source position of each buffered record, so a bad value is reported where it is in the source. */
  private positions: Array<Array<string | undefined>> = [];
  private route: RecordRoute = () => 0;
  private bucketAssigner: DynamicBucketAssigner | undefined;

  constructor(
    private readonly table: Table,
    private readonly settings: Pick<IngestSettings, 'parallelism' | 'batchSize'>,
    private readonly options: IngestWritersOptions,
  ) {}

  /**
   * Tables whose batch reads skip level 0 (deletion vectors) or whose changelog comes from
   * compaction (`lookup`): a compaction dropped at a commit must be redone.
   */
  get level0AtCommit(): boolean {
    const o = this.table.context.options;
    return o.deletionVectorsEnabled || o.changelogProducer === 'lookup';
  }

  /**
   * Opens the writers. Call it after the restore committed any pending checkpoint: the writers
   * plan their sequence numbers and (primary-key tables) their buckets' levels lazily, at their
   * first file, from the table as it is then.
   */
  open(): void {
    const schema = this.table.schema();
    // Dynamic buckets: one assigner for all writers, so buckets fill to target-row-num across them
    // and each checkpoint commits one index file per bucket.
    this.bucketAssigner =
      schema.primaryKeys.length > 0 && this.table.context.options.bucket === -1
        ? DynamicBucketAssigner.forTable(this.table.context, 'latest')
        : undefined;
    this.openWriters();
    this.buffers = this.writers.map(() => []);
    this.positions = this.writers.map(() => []);
    this.route = recordRouter(schema, this.settings.parallelism, this.bucketAssigner);
  }

  private openWriters(): void {
    const { parallelism } = this.settings;
    const { crash, rowKindField, onCompaction } = this.options;
    const startSequence = pipelineStartSequence(this.table);
    for (let w = 0; w < parallelism; w++) {
      const writeOptions = {
        crash,
        ...(rowKindField !== undefined ? { rowKindField } : {}),
        ...(onCompaction !== undefined ? { onCompaction } : {}),
        ...(startSequence ? { startSequence } : {}),
        ...(this.bucketAssigner ? { bucketAssigner: writerBucketAssigner(this.bucketAssigner, w, parallelism) } : {}),
      };
      this.writers[w] = new SinkWriter(this.table, w, writeOptions);
    }
  }

  /**
   * Level-0 files left by a compaction that was dropped before a restart (or by the restore, when
   * its inputs were gone) are compacted at the first checkpoint, as after a drop at a commit.
   * True when the writers now owe such a compaction.
   */
  async compactLeftoverLevel0(): Promise<boolean> {
    const schema = this.table.schema();
    if (!this.level0AtCommit || this.table.context.options.writeOnly || schema.primaryKeys.length === 0) return false;
    let owed = false;
    const writerOf = bucketWriter(schema, this.settings.parallelism);
    for (const b of await level0Buckets(this.table)) {
      await this.writers[writerOf(b.partition, this.table.context.paths.partitionValues(b.partition), b.bucket)]!.compactBuckets([b]);
      owed = true;
    }
    return owed;
  }

  /** Routes a source record to its writer's buffer, handing a full buffer to the writer. */
  async add(record: SourceRecord<RowObject>): Promise<void> {
    const routed = this.route(record.value);
    const w = typeof routed === 'number' ? routed : await routed;
    this.buffers[w]!.push(record.value);
    this.positions[w]!.push(record.position);
    if (this.buffers[w]!.length >= this.settings.batchSize) await this.flush(w);
  }

  private async flush(w: number): Promise<void> {
    try {
      await this.writers[w]!.write(this.buffers[w]!);
    } catch (e) {
      if (!(e instanceof WriteValidationError) || e.rowIndex === undefined) throw e;
      const where = this.positions[w]![e.rowIndex];
      if (where === undefined) throw e;
      throw new SourceRecordError(`${where}${e.column !== undefined ? `, column '${e.column}'` : ''}: ${e.detail}`, { cause: e });
    }
    this.buffers[w] = [];
    this.positions[w] = [];
  }

  /**
   * Hands every buffered record to its writer, then has each writer prepare the committable of
   * checkpoint `id`, passing each to `onPrepared` as soon as it exists.
   */
  async prepare(id: bigint, onPrepared: (c: SinkCommittable) => void): Promise<SinkCommittable[]> {
    for (let w = 0; w < this.writers.length; w++) {
      if (this.buffers[w]!.length > 0) await this.flush(w);
    }
    const prepared: SinkCommittable[] = [];
    for (const w of this.writers) {
      const c = await w.prepareCommit(id);
      prepared.push(c);
      onPrepared(c);
    }
    return prepared;
  }

  /**
   * Replaces every writer by a fresh one that plans its levels from the latest snapshot. Only
   * right after a checkpoint, when every buffer is empty.
   */
  async reopen(): Promise<void> {
    for (const w of this.writers) await w.close();
    this.openWriters();
  }

  /**
   * Has the writers compact again, at the next checkpoint, the buckets whose compaction in
   * `prepared` was dropped at its commit. True when they now owe such a compaction.
   */
  async redoCompactions(prepared: readonly SinkCommittable[]): Promise<boolean> {
    let owed = false;
    for (const c of prepared) {
      const buckets = c.messages.filter((m) => (m.compactBefore?.length ?? 0) > 0 || (m.compactAfter?.length ?? 0) > 0);
      if (buckets.length === 0) continue;
      await this.writers[c.writerId]!.compactBuckets(buckets);
      owed = true;
    }
    return owed;
  }

  /** Deletes the files the writers wrote since their last prepare and drops every buffered record. */
  async abort(): Promise<void> {
    for (const w of this.writers) await w.abort();
    this.buffers = this.writers.map(() => []);
    this.positions = this.writers.map(() => []);
  }

  /** Closes every writer (best effort: this runs on the way out of a failed run too). */
  async close(): Promise<void> {
    for (const w of this.writers) await w.close().catch(() => undefined);
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
