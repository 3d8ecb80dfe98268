/**
 * Picking the files an append-table compaction rewrites (docs/format.md, "Append compaction"): small files of
 * one (partition, bucket), ordered by min sequence number, packed into windows of at least
 * `compaction.min.file-num` files and about `target-file-size` bytes.
 */
import { MaintenanceArgumentError, tableOptions, type CoreOptions } from '@tidemark/core';
import type { TableSchema } from '@tidemark/format';

/** What the picker needs to know of a file. */
export interface CompactCandidate {
  readonly fileSize: number;
  readonly minSequenceNumber: bigint;
  /** The file has a deletion vector: a full compaction rewrites it whatever its size, alone if need be. */
  readonly hasDeletionVector?: boolean;
}

/** Settings of the window picker. */
export interface CompactPickOptions {
  /** `target-file-size` in bytes. */
  readonly targetFileSize: number;
  /** `compaction.small-file-ratio` (0.7): files of at least `target × ratio` bytes are left alone. */
  readonly smallFileRatio: number;
  /** `compaction.min.file-num` (5): a window needs at least this many files. */
  readonly minFileNum: number;
  /**
   * Rewrite every small file (windows of two or more files, no minimum count) and every file with
   * a deletion vector (purging its deleted rows; such a file may make a window alone).
   */
  readonly full?: boolean;
  /** No window holds more files than this. */
  readonly maxFileNum?: number;
}

/** The compaction settings of a table (Paimon option names and defaults). */
export function compactPickOptions(schema: Pick<TableSchema, 'options' | 'primaryKeys'>, full = false): CompactPickOptions {
  const options: CoreOptions = tableOptions(schema);
  let ratio: number;
  try {
    ratio = options.compactionSmallFileRatio;
  } catch (e) {
    throw new MaintenanceArgumentError((e as Error).message, { cause: e });
  }
  if (options.compactionMinFileNum < 1) {
    throw new MaintenanceArgumentError(`table option 'compaction.min.file-num' = '${options.compactionMinFileNum}' must be at least 1`);
  }
  return { targetFileSize: options.targetFileSize, smallFileRatio: ratio, minFileNum: options.compactionMinFileNum, full };
}

/**
 * Splits the files of one bucket into compaction windows. Only files smaller than
 * `targetFileSize × smallFileRatio` are candidates; they are taken in min-sequence order. A window
 * is closed once it has `minFileNum` files and the next file would push it past the target size;
 * while it has fewer files and reaches twice the target size, its oldest file is dropped (the
 * window slides, as Paimon's picker does). A trailing window is kept when it has `minFileNum` files
 * (two in `full` mode). Windows of a single file are not produced, as rewriting one file gains
 * nothing, except in `full` mode for a file with a deletion vector: as in Java's full compaction,
 * files with vectors are always rewritten (whatever their size), which purges their deleted rows.
 */
export function pickCompactWindows<T extends CompactCandidate>(files: readonly T[], options: CompactPickOptions): T[][] {
  const threshold = options.targetFileSize * options.smallFileRatio;
  const full = options.full === true;
  const minFiles = Math.max(2, full ? 2 : options.minFileNum);
  const maxFiles = options.maxFileNum ?? Number.POSITIVE_INFINITY;
  const candidates = files
    .filter((f) => f.fileSize < threshold || (full && f.hasDeletionVector === true))
    .sort((a, b) => (a.minSequenceNumber < b.minSequenceNumber ? -1 : a.minSequenceNumber > b.minSequenceNumber ? 1 : 0));
  const windows: T[][] = [];
  if (maxFiles < minFiles) return windows;
  let window: T[] = [];
  let bytes = 0;
  for (const f of candidates) {
    if (window.length >= minFiles && (bytes + f.fileSize > options.targetFileSize || window.length >= maxFiles)) {
      windows.push(window);
      window = [];
      bytes = 0;
    }
    window.push(f);
    bytes += f.fileSize;
    while (window.length < minFiles && window.length > 1 && bytes >= 2 * options.targetFileSize) {
      bytes -= window.shift()!.fileSize;
    }
  }
  if (window.length >= minFiles || (full && window.length === 1 && window[0]!.hasDeletionVector === true)) windows.push(window);
  return windows;
}
