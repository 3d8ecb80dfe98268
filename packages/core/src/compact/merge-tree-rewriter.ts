/**
 * The rewriter of primary-key compaction: merges sections of sorted runs through the table's
 * merge function into new files of the output level (file source COMPACT), or moves a file to
 * another level without touching it. It remembers every file it wrote so that a compaction that
 * is not committed can delete them again.
 *
 * With a compaction changelog producer it decides, as Paimon's changelog rewriters do, which
 * rewrites also produce changelog: `full-compaction` those into the max level, `lookup` those
 * taking level-0 files (into a level ≥ 1). A file that would only move up a level is then
 * rewritten too, since its changelog has to be computed from its rows.
 */
import type { DataFileMeta } from '@tidemark/format';
import type { CompactionChangelogProducer } from './changelog-merge.js';
import { SortedRun } from './sorted-run.js';
import { upgradeResult, type CompactResult, type CompactRewriter } from './compact-task.js';
import { mergeSections, type KeyValueSegment, type MergeReadContext, type WindowMerge } from './merge-tree-reader.js';

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
  /** Set for the `lookup` and `full-compaction` changelog producers. */
  readonly changelog?: ChangelogRewriteContext;
}

/** How a rewriter produces changelog. */
export interface ChangelogRewriteContext {
  readonly producer: CompactionChangelogProducer;
  /** Max level of the bucket. */
  readonly maxLevel: number;
  /** A sink writing changelog files (of `level`). */
  newSink(level: number): KeyValueSink;
  /** The window merge that also emits changelog rows to `emit`. */
  merge(outputLevel: number, dropDelete: boolean, emit: (rows: KeyValueSegment) => Promise<void>): WindowMerge;
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
    const changelog = this.ctx.changelog;
    if (changelog !== undefined && producesChangelog(changelog, outputLevel, sections)) {
      return this.rewriteWithChangelog(changelog, outputLevel, dropDelete, sections);
    }
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
    const changelog = this.ctx.changelog;
    const sections = [[SortedRun.fromSingle(file)]];
    if (changelog !== undefined && producesChangelog(changelog, outputLevel, sections)) {
      // Its changelog needs its rows read anyway: write them at the new level on the way.
      return this.rewriteWithChangelog(changelog, outputLevel, outputLevel === changelog.maxLevel, sections);
    }
    return upgradeResult(outputLevel, file);
  }

  private async rewriteWithChangelog(
    changelog: ChangelogRewriteContext,
    outputLevel: number,
    dropDelete: boolean,
    sections: readonly (readonly SortedRun[])[],
  ): Promise<CompactResult> {
    const sink = this.ctx.newSink(outputLevel);
    const changes = changelog.newSink(outputLevel);
    let after: DataFileMeta[];
    let written: DataFileMeta[];
    try {
      const merge = changelog.merge(outputLevel, dropDelete, (rows) => changes.write(rows));
      for await (const rows of mergeSections(this.ctx.read, sections, merge)) await sink.write(rows);
      after = await sink.close();
      written = await changes.close();
    } catch (e) {
      await sink.abort().catch(() => undefined);
      await changes.abort().catch(() => undefined);
      throw e;
    }
    this.files.push(...after, ...written);
    return { before: sections.flatMap((s) => s.flatMap((r) => r.files)), after, changelog: written };
  }

  async deleteWritten(): Promise<void> {
    const files = this.files.splice(0);
    if (files.length > 0) await this.ctx.deleteFiles(files);
  }

  close(): Promise<void> {
    return this.onClose();
  }
}

/**
 * Whether a rewrite into `outputLevel` produces changelog: into the max level for
 * `full-compaction`; with level-0 inputs into a level ≥ 1 for `lookup`.
 */
function producesChangelog(changelog: ChangelogRewriteContext, outputLevel: number, sections: readonly (readonly SortedRun[])[]): boolean {
  if (changelog.producer === 'full-compaction') return outputLevel === changelog.maxLevel;
  if (outputLevel === 0) return false;
  return sections.some((s) => s.some((r) => r.files.some((f) => f.level === 0)));
}
