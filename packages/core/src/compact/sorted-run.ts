/**
 * Sorted runs of a primary-key bucket: a list of data files whose key ranges do not overlap,
 * ordered by key, so that reading them one after another yields rows in key order. Level 0 holds
 * one run per file; every higher level is one run.
 */
import { deserializeBinaryRow, type DataFileMeta, type DataType } from '@tidemark/format';
import { compareKeys } from '../key-order.js';
import { CompactionError } from './compact-errors.js';

/** Orders two serialized key rows (`_MIN_KEY` / `_MAX_KEY`). */
export type KeyComparator = (a: Uint8Array, b: Uint8Array) => number;

/**
 * A comparator of serialized key BinaryRows of the given key types (the trimmed primary key),
 * in the order the merge uses (field by field, nulls first). Decoded keys are cached per byte
 * array, since the same `_MIN_KEY` is compared many times while levels are sorted.
 */
export function binaryRowKeyComparator(keyTypes: readonly DataType[]): KeyComparator {
  const cache = new WeakMap<Uint8Array, ReturnType<typeof deserializeBinaryRow>>();
  const decode = (b: Uint8Array): ReturnType<typeof deserializeBinaryRow> => {
    let v = cache.get(b);
    if (v === undefined) {
      v = deserializeBinaryRow(b, keyTypes);
      cache.set(b, v);
    }
    return v;
  };
  return (a, b) => compareKeys(decode(a), decode(b));
}

/** Files of one sorted run, ordered by key, with their total size. */
export class SortedRun {
  private constructor(
    readonly files: readonly DataFileMeta[],
    readonly totalSize: number,
  ) {}

  static empty(): SortedRun {
    return new SortedRun([], 0);
  }

  static fromSingle(file: DataFileMeta): SortedRun {
    return new SortedRun([file], file.fileSize);
  }

  /** Files already in key order (not checked). */
  static fromSorted(files: readonly DataFileMeta[]): SortedRun {
    return new SortedRun(
      [...files],
      files.reduce((s, f) => s + f.fileSize, 0),
    );
  }

  /**
   * Sorts `files` by min key and (when `strict`) checks that their key ranges do not overlap.
   *
   * @throws CompactionError when `strict` and two files overlap (they cannot form one sorted run).
   */
  static fromUnsorted(files: readonly DataFileMeta[], compare: KeyComparator, where = 'sorted run', strict = true): SortedRun {
    const sorted = [...files].sort((a, b) => compare(a.minKey, b.minKey));
    for (let i = 1; strict && i < sorted.length; i++) {
      if (compare(sorted[i - 1]!.maxKey, sorted[i]!.minKey) >= 0) {
        throw new CompactionError(
          `${where}: files '${sorted[i - 1]!.fileName}' and '${sorted[i]!.fileName}' have overlapping key ranges, ` +
            'so they cannot form one sorted run',
        );
      }
    }
    return SortedRun.fromSorted(sorted);
  }

  get isEmpty(): boolean {
    return this.files.length === 0;
  }
}

/** A sorted run and the level it lives in. */
export interface LevelSortedRun {
  readonly level: number;
  readonly run: SortedRun;
}
