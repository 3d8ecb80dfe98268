/**
 * Asking a data file's index whether a column may hold some values (Paimon's
 * `FileIndexPredicate` for `=` and `IN`): an index type this reader knows can rule the file out;
 * one it does not know (bitmap, bsi, range-bitmap, …) or a column without index never does.
 */
import type { DataType } from '../types.js';
import { BLOOM_FILTER_INDEX, BloomFilterIndexReader } from './bloom-filter-index.js';
import type { FileIndexFile } from './file-index-format.js';

/**
 * False only when an index of `column` in `index` proves that no row of the file has any of
 * `values` in that column (`type` is the column's type in the schema the file was written with).
 * An empty `values` list matches no row, so an indexed column answers false for it.
 */
export function fileIndexMightContain(index: FileIndexFile, column: string, type: DataType, values: readonly unknown[]): boolean {
  const bloom = index.body(column, BLOOM_FILTER_INDEX);
  if (bloom === null) return true;
  if (bloom === 'empty') return false;
  let reader: BloomFilterIndexReader;
  try {
    reader = new BloomFilterIndexReader(type, bloom);
  } catch {
    // A body this reader cannot take rules nothing out.
    return true;
  }
  return values.some((v) => reader.mightContain(v));
}
