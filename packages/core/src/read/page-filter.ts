/**
 * Page pruning inside a row group: with the file's page index (offset index and column index),
 * the rows of a large row group are cut where a page of a filtered column begins, and a stretch
 * of rows is read only when the bounds of the pages covering it may satisfy the read's filter. A
 * key lookup in a 1M-row group then reads one page per column, not the whole group.
 */
import type { DataField, DataType, ParquetColumnPages, ParquetDataFile, ParquetStatValue } from '@tidemark/format';
import { mightMatch, type ColumnStats, type Predicate } from '../predicate.js';
import { prunableColumns, statValue } from './row-group-filter.js';

/** Row groups smaller than this are read whole (and kept whole by key lookups): pages would save little. */
export const PAGE_SELECT_MIN_ROWS = 131_072;

/**
 * Parquet writers truncate column-index bounds of long strings (parquet-rs and parquet-mr at 64
 * bytes): a string bound this long or longer may be cut, and is not used.
 */
const MAX_EXACT_STRING_BOUND_BYTES = 63;

/** Rows of a row group to read, `start` inclusive, `end` exclusive, from the group's first row. */
export interface RowRange {
  readonly start: number;
  readonly end: number;
}

/**
 * The row ranges of row group `group` of `data` that may hold rows satisfying `predicate` (which
 * names `readFields`; `fileFields[i]` is the file's field of `readFields[i]`), ascending and
 * disjoint; null when the page index cannot narrow the group (read it whole).
 */
export async function pageRowRanges(
  data: ParquetDataFile,
  group: number,
  predicate: Predicate,
  readFields: readonly DataField[],
  fileFields: readonly (DataField | undefined)[],
): Promise<RowRange[] | null> {
  const usable = prunableColumns(predicate, readFields, fileFields);
  const columns: Array<{ name: string; type: DataType; pages: ParquetColumnPages }> = [];
  for (const [name, { physical, type }] of usable) {
    const pages = await data.columnPages(group, physical);
    if (pages !== null && pages.stats !== null && pages.pages.length > 0) columns.push({ name, type, pages });
  }
  if (columns.length === 0) return null;
  const rows = columns[0]!.pages.rows;
  const cuts = [...new Set([0, ...columns.flatMap((c) => c.pages.pages.map((p) => p.firstRow))])]
    .filter((r) => r < rows)
    .sort((a, b) => a - b);
  const ranges: RowRange[] = [];
  const at = columns.map(() => 0);
  cuts.forEach((start, k) => {
    const end = cuts[k + 1] ?? rows;
    // The page of each column covering `start`.
    columns.forEach((c, j) => {
      while (at[j]! + 1 < c.pages.pages.length && c.pages.pages[at[j]! + 1]!.firstRow <= start) at[j]!++;
    });
    const stats = new Map<string, ColumnStats>();
    columns.forEach((c, j) => stats.set(c.name, pageStats(c.pages, at[j]!, c.type)));
    if (!mightMatch(predicate, { rowCount: null, columns: (column) => stats.get(column) })) return;
    const last = ranges[ranges.length - 1];
    if (last !== undefined && last.end === start) ranges[ranges.length - 1] = { start: last.start, end };
    else ranges.push({ start, end });
  });
  return ranges.length === 1 && ranges[0]!.start === 0 && ranges[0]!.end === rows ? null : ranges;
}

/** One page's bounds as predicate values; a null page or a cut bound says nothing. */
function pageStats(pages: ParquetColumnPages, page: number, type: DataType): ColumnStats {
  const s = pages.stats![page]!;
  if (s.nullPage) return {};
  const min = bound(s.min, pages, type);
  const max = bound(s.max, pages, type);
  return min !== undefined && max !== undefined ? { min, max } : {};
}

function bound(v: ParquetStatValue | undefined, pages: ParquetColumnPages, type: DataType): unknown {
  if (typeof v === 'string' && Buffer.byteLength(v) > MAX_EXACT_STRING_BOUND_BYTES) return undefined;
  return statValue(v, pages.element, type);
}
