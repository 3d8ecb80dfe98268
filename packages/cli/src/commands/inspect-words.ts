/**
 * The wording the terminal and HTML reports of `tidemark inspect` share, so both say the same
 * thing: counts with their noun in the right number, what the "rows" of live files are, how the
 * table's buckets are counted, and why compaction has nothing to merge while small files exist.
 */
import type { CompactionPlan, TableReport } from '@tidemark/maintenance';

/** `1,234` (grouped, rounded). */
export function formatCount(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** `1 file`, `2 files`; `plural` for nouns that do not just take an s. */
export function counted(n: number, word: string, plural = `${word}s`): string {
  return `${formatCount(n)} ${n === 1 ? word : plural}`;
}

/**
 * The rows of the live files as a read sees them: an append table's rows less those deletion
 * vectors mark deleted; a primary-key table's files hold records (every version of a key and its
 * deletes) that a read merges, so those are called records, not rows.
 */
export function liveRowsText(report: Pick<TableReport, 'primaryKeys' | 'liveFiles'>): string {
  const { rows, deletedRows } = report.liveFiles;
  const deleted =
    deletedRows === null
      ? ' (some deleted by vectors: count not recorded)'
      : deletedRows > 0
        ? ` (${formatCount(deletedRows)} deleted by vectors)`
        : '';
  if (report.primaryKeys.length > 0) return `${counted(rows, 'record')} before merging by key${deleted}`;
  if (deletedRows === null || deletedRows === 0) return `${counted(rows, 'row')}${deleted}`;
  return `${counted(rows - deletedRows, 'row')} (+${formatCount(deletedRows)} deleted by vectors)`;
}

/** `3 buckets`, or `unbucketed` for an append table without buckets (every file in bucket 0). */
export function bucketsText(report: Pick<TableReport, 'primaryKeys' | 'bucket' | 'liveFiles'>): string {
  return report.primaryKeys.length === 0 && report.bucket === -1 ? 'unbucketed' : counted(report.liveFiles.buckets, 'bucket');
}

/** Why a compaction plan with no files leaves the table's small files alone (empty when there are none). */
export function nothingToMergeText(k: CompactionPlan, smallFiles: number): string {
  if (smallFiles === 0) return 'nothing to merge';
  return k.mode === 'append'
    ? `nothing to merge: no bucket holds ${k.trigger.option} (${k.trigger.value}) small files yet`
    : `nothing to merge: no bucket has ${k.trigger.option} (${k.trigger.value}) sorted runs yet`;
}
