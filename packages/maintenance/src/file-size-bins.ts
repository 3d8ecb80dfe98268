/**
 * Data-file size bins relative to a table's `target-file-size`. The edges are powers of two of the
 * target (1/64 … 2×), so the same bins mean the same thing on every table whatever its target, and
 * "everything left of the target edge" reads directly as work for compaction.
 */

/** One bin of a data-file size histogram: files of `minBytes` ≤ size < `maxBytes`. */
export interface FileSizeBin {
  /** Inclusive lower edge in bytes. */
  readonly minBytes: number;
  /** Exclusive upper edge in bytes; null for the last, open-ended bin. */
  readonly maxBytes: number | null;
  /** Lower edge as a fraction of `target-file-size` (0, 1/64, …, 2). */
  readonly minFraction: number;
}

/** Fractions of the target at which the bins start (the first bin starts at 0). */
const FRACTIONS = [0, 1 / 64, 1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 1, 2] as const;

/** Number of bins of every histogram in a table report. */
export const FILE_SIZE_BIN_COUNT = FRACTIONS.length;

/** The bins for a target file size in bytes. */
export function fileSizeBins(targetFileSize: number): FileSizeBin[] {
  return FRACTIONS.map((f, i) => {
    const next = FRACTIONS[i + 1];
    return {
      minBytes: Math.floor(f * targetFileSize),
      maxBytes: next === undefined ? null : Math.floor(next * targetFileSize),
      minFraction: f,
    };
  });
}

/** Index of the bin a file of `size` bytes falls in. */
export function fileSizeBin(bins: readonly FileSizeBin[], size: number): number {
  for (let i = bins.length - 1; i > 0; i--) if (size >= bins[i]!.minBytes) return i;
  return 0;
}
