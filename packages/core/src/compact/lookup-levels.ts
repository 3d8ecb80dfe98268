/**
 * Point lookups of keys in the levels ≥ 1 of one primary-key bucket (Java's `LookupLevels`): the
 * structure behind lookup compaction. Compaction of deletion-vector tables uses it to find the
 * older record a newly compacted key replaces (and mark it deleted); the `lookup` changelog
 * producer uses it to find the value a key had before.
 *
 * Each level ≥ 1 is one sorted run, so a key lies in at most one file per level, found by binary
 * search over the files' `_MIN_KEY` / `_MAX_KEY`. A file's records are loaded on its first lookup
 * (rows in key order, one per key) and kept in a cache bounded by a row budget, least recently
 * used first out. Rows a deletion vector marks deleted are skipped, so a lookup returns the live
 * record of the key, from the lowest level that has one.
 */
import type * as arrow from 'apache-arrow';
import type { FileIO } from '@tidemark/storage';
import { deserializeBinaryRow, type DataField, type DataFileMeta, type TableSchema, type Value } from '@tidemark/format';
import { valueReader } from '../read/arrow-values.js';
import { readDataFile } from '../read/data-file-reader.js';
import { compareKeys } from '../key-order.js';
import type { Levels } from './levels.js';

/** The record a key has in some level ≥ 1, and where it is. */
export interface LookupResult {
  /** Values of the read fields, in their order. */
  readonly row: readonly Value[];
  /** Row kind (`_VALUE_KIND`: 0 +I, 1 -U, 2 +U, 3 -D). */
  readonly kind: number;
  readonly sequence: bigint;
  /** The data file holding the record. */
  readonly file: DataFileMeta;
  /** 0-based row position in that file (the position a deletion vector marks). */
  readonly position: number;
  readonly level: number;
}

/** What {@link LookupLevels} reads with. */
export interface LookupLevelsOptions {
  readonly fileIO: FileIO;
  /** Full location of a data file of the bucket from its name (`_EXTERNAL_PATH` wins when set). */
  pathOf(fileName: string): string;
  /** Schema of a file's `_SCHEMA_ID`. */
  schemaOf(id: number): Promise<TableSchema>;
  /** Fields of the returned rows (the table's current fields). */
  readonly readFields: readonly DataField[];
  /** The trimmed primary-key fields; keys passed to {@link LookupLevels.lookup} hold their values. */
  readonly keyFields: readonly DataField[];
  /** Whether a row is deleted by a deletion vector (current state, asked per lookup). */
  isDeleted?(fileName: string, position: number): boolean;
  /** Rows kept in memory across files (default 1,000,000); a file larger than that is still loaded. */
  readonly maxCachedRows?: number;
}

interface LoadedFile {
  readonly keys: Value[][];
  readonly batches: ReadonlyArray<{ readonly start: number; readonly columns: readonly arrow.Data[] }>;
  readonly sequence: BigInt64Array;
  readonly kinds: Int8Array;
}

const DEFAULT_MAX_CACHED_ROWS = 1_000_000;

/** Point lookups over the levels ≥ 1 of one bucket (see the module comment). */
export class LookupLevels {
  private readonly cache = new Map<string, LoadedFile>();
  private cachedRows = 0;
  private readonly keyTypes;
  private readonly keyPositions: number[];
  private readonly decoded = new WeakMap<Uint8Array, Value[]>();

  /**
   * @param levels the bucket's levels; lookups see their current state (files compacted away are
   *   no longer found, and their cached rows are dropped by {@link forget} or aged out)
   */
  constructor(
    private readonly levels: Levels,
    private readonly options: LookupLevelsOptions,
  ) {
    this.keyTypes = options.keyFields.map((f) => f.type);
    this.keyPositions = options.keyFields.map((k) => {
      const i = options.readFields.findIndex((f) => f.id === k.id);
      if (i < 0) throw new RangeError(`key field '${k.name}' is not among the read fields`);
      return i;
    });
  }

  /** The bucket's max level (a lookup from above it finds nothing). */
  get maxLevel(): number {
    return this.levels.maxLevel;
  }

  /**
   * The live record of `key` in the lowest level ≥ `startLevel` that has one, or null.
   * `startLevel` is at least 1 (level 0 is never looked up: its files overlap).
   */
  async lookup(key: readonly Value[], startLevel = 1): Promise<LookupResult | null> {
    for (let level = Math.max(1, startLevel); level <= this.levels.maxLevel; level++) {
      const file = this.fileOf(level, key);
      if (file === null) continue;
      const found = await this.lookupInFile(file, level, key);
      if (found !== null) return found;
    }
    return null;
  }

  /** Drops the cached rows of files that are gone (compacted away). */
  forget(files: Iterable<DataFileMeta>): void {
    for (const f of files) this.evict(f.fileName);
  }

  private keyOf(bytes: Uint8Array): Value[] {
    let v = this.decoded.get(bytes);
    if (v === undefined) {
      v = deserializeBinaryRow(bytes, this.keyTypes);
      this.decoded.set(bytes, v);
    }
    return v;
  }

  /** The file of `level` whose key range holds `key`, or null. */
  private fileOf(level: number, key: readonly Value[]): DataFileMeta | null {
    const files = this.levels.runOfLevel(level).files;
    let lo = 0;
    let hi = files.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const f = files[mid]!;
      if (compareKeys(this.keyOf(f.maxKey), key) < 0) lo = mid + 1;
      else if (compareKeys(this.keyOf(f.minKey), key) > 0) hi = mid - 1;
      else return f;
    }
    return null;
  }

  private async lookupInFile(file: DataFileMeta, level: number, key: readonly Value[]): Promise<LookupResult | null> {
    const loaded = await this.load(file);
    // Last row with a key ≤ `key`: with several records of a key (not expected in levels ≥ 1)
    // the newest, written last, wins.
    let lo = 0;
    let hi = loaded.keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareKeys(loaded.keys[mid]!, key) <= 0) lo = mid + 1;
      else hi = mid;
    }
    for (let pos = lo - 1; pos >= 0 && compareKeys(loaded.keys[pos]!, key) === 0; pos--) {
      if (this.options.isDeleted?.(file.fileName, pos)) continue;
      return { row: this.rowAt(loaded, pos), kind: loaded.kinds[pos]!, sequence: loaded.sequence[pos]!, file, position: pos, level };
    }
    return null;
  }

  private rowAt(loaded: LoadedFile, pos: number): Value[] {
    let b = loaded.batches.length - 1;
    while (loaded.batches[b]!.start > pos) b--;
    const batch = loaded.batches[b]!;
    return this.options.readFields.map((f, i) => valueReader(batch.columns[i]!, f.type)(pos - batch.start));
  }

  private async load(file: DataFileMeta): Promise<LoadedFile> {
    const hit = this.cache.get(file.fileName);
    if (hit !== undefined) {
      // Most recently used last.
      this.cache.delete(file.fileName);
      this.cache.set(file.fileName, hit);
      return hit;
    }
    const schema = await this.options.schemaOf(file.schemaId);
    const path = file.externalPath || this.options.pathOf(file.fileName);
    const keys: Value[][] = [];
    const batches: Array<{ start: number; columns: readonly arrow.Data[] }> = [];
    const sequence = new BigInt64Array(file.rowCount);
    const kinds = new Int8Array(file.rowCount);
    for await (const b of readDataFile(
      this.options.fileIO,
      { path, fileSize: file.fileSize, rowCount: file.rowCount, schema },
      this.options.readFields,
      {
        keyValue: true,
      },
    )) {
      const columns = b.batch.data.children;
      const start = keys.length;
      batches.push({ start, columns });
      const readers = this.keyPositions.map((p) => valueReader(columns[p]!, this.options.readFields[p]!.type));
      for (let r = 0; r < b.batch.numRows; r++) keys.push(readers.map((read) => read(r)));
      sequence.set(b.sequence!, start);
      kinds.set(b.valueKind!, start);
    }
    const loaded: LoadedFile = { keys, batches, sequence, kinds };
    this.cache.set(file.fileName, loaded);
    this.cachedRows += keys.length;
    const budget = this.options.maxCachedRows ?? DEFAULT_MAX_CACHED_ROWS;
    for (const name of this.cache.keys()) {
      if (this.cachedRows <= budget || name === file.fileName) break;
      this.evict(name);
    }
    return loaded;
  }

  private evict(fileName: string): void {
    const f = this.cache.get(fileName);
    if (f === undefined) return;
    this.cache.delete(fileName);
    this.cachedRows -= f.keys.length;
  }
}
