/**
 * Compaction of deletion-vector primary-key tables (Java's lookup compaction with a DV
 * maintainer). Reads of such tables take each key from the one live record in levels ≥ 1, without
 * merging, so whenever compaction moves a key's newer record up from level 0 it must mark the
 * key's older record deleted in place:
 * - for each key of a merge window whose records all come from level 0, the key is looked up in
 *   the levels above the output level ({@link LookupLevels}); a record found there is marked in
 *   its file's deletion vector (whether the new result is an upsert or a delete: either way the
 *   old record is superseded). Keys with a record of level ≥ 1 in the window need nothing: those
 *   files are rewritten;
 * - where the merge engine builds on older values (partial-update, aggregation, `sequence.field`),
 *   the window merge also merges the found record with the new ones (bucket-rewriter.ts), as Java's
 *   `LookupChangelogMergeFunctionWrapper` does: the merged row replaces the marked one;
 * - a level-0 file moved up unchanged is read once for the same lookups (one holding retractions
 *   is rewritten instead: they must not reach levels ≥ 1; so is one whose move produces changelog,
 *   which needs the same reads and lookups, and, where older values are merged, one moved below
 *   the max level, whose rows must be merged with the records they replace: Java's
 *   `LookupMergeTreeCompactRewriter.upgradeStrategy`);
 * - files a rewrite consumed lose their vectors (they are gone after the commit).
 * Compaction inputs are read with their vectors applied (merge-tree-reader.ts).
 */
import type { DataFileMeta, Value } from '@tidemark/format';
import { valueReader } from '../read/arrow-values.js';
import { compareKeys } from '../key-order.js';
import type { BucketDvMaintainer } from '../deletion-vectors/bucket-dv-maintainer.js';
import { upgradeResult, type CompactResult } from './compact-task.js';
import type { LookupLevels } from './lookup-levels.js';
import { mergeSections, type KeyValueSegment, type MergeReadContext, type WindowMerge } from './merge-tree-reader.js';
import type { BucketRewriter } from './merge-tree-rewriter.js';
import { SortedRun } from './sorted-run.js';

/** The deletion-vector state a bucket's compaction maintains. */
export interface DeletionVectorCompaction {
  readonly maintainer: BucketDvMaintainer;
  readonly lookup: LookupLevels;
}

/**
 * Marks the records of levels above `outputLevel` that the window's level-0-only keys replace
 * (see the module comment).
 */
export async function markReplacedRecords(
  segments: readonly KeyValueSegment[],
  outputLevel: number,
  read: Pick<MergeReadContext, 'keyPositions' | 'readFields'>,
  dv: DeletionVectorCompaction,
): Promise<void> {
  const keys: Array<{ key: Value[]; high: boolean }> = [];
  for (const s of segments) {
    const readers = read.keyPositions.map((p) => valueReader(s.columns[p]!, read.readFields[p]!.type));
    const high = (s.level ?? 0) >= 1;
    for (let r = 0; r < s.rows; r++) keys.push({ key: readers.map((get) => get(r)), high });
  }
  keys.sort((a, b) => compareKeys(a.key, b.key));
  for (let i = 0; i < keys.length;) {
    let j = i;
    let high = false;
    for (; j < keys.length && compareKeys(keys[j]!.key, keys[i]!.key) === 0; j++) if (keys[j]!.high) high = true;
    if (!high) {
      const found = await dv.lookup.lookup(keys[i]!.key, outputLevel + 1);
      if (found !== null) dv.maintainer.notifyNewDeletion(found.file.fileName, found.position);
    }
    i = j;
  }
}

/**
 * A window merge that also marks the records the window's keys replace. It merges first: a
 * changelog merge looks up each key's old value, which the marking then deletes.
 */
export function lookupWindowMerge(
  merge: WindowMerge,
  outputLevel: number,
  read: Pick<MergeReadContext, 'keyPositions' | 'readFields'>,
  dv: DeletionVectorCompaction,
): WindowMerge {
  return async (segments) => {
    const merged = await merge(segments);
    await markReplacedRecords(segments, outputLevel, read, dv);
    return merged;
  };
}

/**
 * A bucket rewriter of a deletion-vector table: rewrites go through `inner` (whose window merge
 * must be a {@link lookupWindowMerge}); level-0 files moved up are looked up key by key.
 */
export class LookupCompactRewriter implements BucketRewriter {
  /**
   * @param mergesOldValues the window merge merges the records it replaces (see the module
   *   comment): level-0 files moved below the max level are rewritten through it
   */
  constructor(
    private readonly inner: BucketRewriter,
    private readonly read: MergeReadContext,
    private readonly dv: DeletionVectorCompaction,
    private readonly mergesOldValues = false,
  ) {}

  get written(): readonly DataFileMeta[] {
    return this.inner.written;
  }

  async rewrite(outputLevel: number, dropDelete: boolean, sections: Parameters<BucketRewriter['rewrite']>[2]): Promise<CompactResult> {
    const result = await this.inner.rewrite(outputLevel, dropDelete, sections);
    for (const f of result.before) this.dv.maintainer.removeDeletionVectorOf(f.fileName);
    this.dv.lookup.forget(result.before);
    return result;
  }

  async upgrade(outputLevel: number, file: DataFileMeta): Promise<CompactResult> {
    const belowTop = outputLevel < this.dv.lookup.maxLevel;
    if (file.level === 0 && outputLevel > 0 && (file.deleteRowCount !== 0 || (this.mergesOldValues && belowTop))) {
      // Retractions must not reach levels >= 1, which DV reads take as they are; nor may a row
      // that replaces an older record without holding its values.
      return this.rewrite(outputLevel, true, [[SortedRun.fromSingle(file)]]);
    }
    if (file.level === 0 && outputLevel > 0) {
      // A changelog producer needs the file's rows compared with the old values: `inner` then
      // rewrites it through the changelog merge, which marks the replaced records on the way.
      const upgraded = await this.inner.upgrade(outputLevel, file);
      if (upgraded.changelog !== undefined) {
        for (const f of upgraded.before) this.dv.maintainer.removeDeletionVectorOf(f.fileName);
        this.dv.lookup.forget(upgraded.before);
        return upgraded;
      }
      const collect: WindowMerge = async (segments) => {
        await markReplacedRecords(segments, outputLevel, this.read, this.dv);
        return null;
      };
      // Above the max level there is nothing to find.
      if (belowTop) {
        for await (const _ of mergeSections(this.read, [[SortedRun.fromSingle(file)]], collect)) {
          // Nothing is yielded: the pass only marks replaced records.
        }
      }
    }
    return upgradeResult(outputLevel, file);
  }

  deleteWritten(): Promise<void> {
    return this.inner.deleteWritten();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
