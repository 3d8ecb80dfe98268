/**
 * The rewriter of primary-key compaction: merges sections of sorted runs through the table's
 * merge function into new files of the output level (file source COMPACT), or moves a file to
 * another level without touching it. It remembers every file it wrote so that a compaction that
 * is not committed can delete them again.
 */
import type { DataFileMeta } from '@tidemark/format';
import { upgradeResult, type CompactResult, type CompactRewriter } from './compact-task.js';
import { mergeSections, type KeyValueSegment, type MergeReadContext, type WindowMerge } from './merge-tree-reader.js';
import type { SortedRun } from './sorted-run.js';

/** Receives the merged records of one rewrite, in key order, and writes them as files of one level. */
export interface KeyValueSink {
  write(rows: KeyValueSegment): Promise<void>;
  /** Finishes the last file; returns every file written. */
  close(): Promise<DataFileMeta[]>;
  /** Stops and deletes whatever was written. */
  abort(): Promise<void>;
}

/** What {@link MergeTreeCompactRewriter} writes with. */
export interface MergeTreeRewriterContext {
  readonly read: MergeReadContext;
  /** A sink writing files of `level`. */
  newSink(level: number): KeyValueSink;
  /**
   * Merges a window of records by the table's merge engine; drops retractions when `dropDelete`.
   * `outputLevel` is the level the merged records go to.
   */
  merge(dropDelete: boolean, outputLevel: number): WindowMerge;
  /** Deletes data files of this bucket. */
  deleteFiles(files: readonly DataFileMeta[]): Promise<void>;
}

/** A rewriter bound to one bucket, with cleanup of what it wrote. */
export interface BucketRewriter extends CompactRewriter {
  /** Every file written so far. */
  readonly written: readonly DataFileMeta[];
  /** Deletes every file written so far (for a compaction that is not committed). */
  deleteWritten(): Promise<void>;
  /** Releases what the rewriter holds open (e.g. its in-flight record). */
  close(): Promise<void>;
}

/** Rewrites and upgrades files of one bucket (see the module comment). */
export class MergeTreeCompactRewriter implements BucketRewriter {
  private readonly files: DataFileMeta[] = [];

  constructor(
    private readonly ctx: MergeTreeRewriterContext,
    private readonly onClose: () => Promise<void> = async () => undefined,
  ) {}

  get written(): readonly DataFileMeta[] {
    return this.files;
  }

  async rewrite(outputLevel: number, dropDelete: boolean, sections: readonly (readonly SortedRun[])[]): Promise<CompactResult> {
    const sink = this.ctx.newSink(outputLevel);
    let after: DataFileMeta[];
    try {
      for await (const rows of mergeSections(this.ctx.read, sections, this.ctx.merge(dropDelete, outputLevel))) await sink.write(rows);
      after = await sink.close();
    } catch (e) {
      await sink.abort().catch(() => undefined);
      throw e;
    }
    this.files.push(...after);
    return { before: sections.flatMap((s) => s.flatMap((r) => r.files)), after };
  }

  async upgrade(outputLevel: number, file: DataFileMeta): Promise<CompactResult> {
    return upgradeResult(outputLevel, file);
  }

  async deleteWritten(): Promise<void> {
    const files = this.files.splice(0);
    if (files.length > 0) await this.ctx.deleteFiles(files);
  }

  close(): Promise<void> {
    return this.onClose();
  }
}
