/**
 * Point lookups of primary keys in the levels ≥ 1 of one bucket, for the `lookup` changelog
 * producer: the value a key had before a compaction of level-0 files is its record in the first
 * level (from the output level + 1 on) whose files hold it. Levels ≥ 1 are sorted runs, so a key
 * has at most one candidate file per level, found by its `_MIN_KEY` / `_MAX_KEY` range; a file is
 * read once and kept (a few at a time) so that the sorted keys of a compaction hit it in a row.
 */
import type * as arrow from 'apache-arrow';
import { deserializeBinaryRow, type DataFileMeta, type DataType, type Value } from '@tidemark/format';
import { valueReader } from '../read/arrow-values.js';
import { readDataFile } from '../read/data-file-reader.js';
import { compareKeys } from '../read/merge-engine.js';
import type { LookupHit } from './changelog-merge.js';
import type { Levels } from './levels.js';
import type { MergeReadContext } from './merge-tree-reader.js';

/** Files kept decoded at a time. */
const CACHED_FILES = 8;

interface LoadedFile {
  readonly batches: ReadonlyArray<{
    readonly columns: readonly arrow.Data[];
    readonly sequence: BigInt64Array;
    readonly kinds: Int8Array;
    readonly rows: number;
    key(row: number): Value[];
  }>;
}

/** Looks keys up in the levels of one bucket (reads only; the levels must not change meanwhile). */
export class LevelsLookup {
  private readonly cache = new Map<string, Promise<LoadedFile>>();
  private readonly ranges = new WeakMap<DataFileMeta, { min: Value[]; max: Value[] }>();

  constructor(
    private readonly ctx: MergeReadContext,
    private readonly levels: Levels,
    private readonly keyTypes: readonly DataType[],
  ) {}

  /** The newest record of each key in levels `startLevel`..max (first level holding it), or null. */
  async lookup(keys: readonly (readonly Value[])[], startLevel: number): Promise<(LookupHit | null)[]> {
    const out: (LookupHit | null)[] = [];
    for (const key of keys) {
      let hit: LookupHit | null = null;
      for (let level = Math.max(1, startLevel); hit === null && level <= this.levels.maxLevel; level++) {
        for (const file of this.levels.runOfLevel(level).files) {
          const range = this.rangeOf(file);
          if (compareKeys(key, range.min) < 0 || compareKeys(key, range.max) > 0) continue;
          const found = await this.find(file, key);
          // Files of one level overlap only after concurrent compactions: the newest record wins.
          if (found !== null && (hit === null || found.sequence > hit.sequence)) hit = found;
        }
      }
      out.push(hit);
    }
    return out;
  }

  private rangeOf(file: DataFileMeta): { min: Value[]; max: Value[] } {
    let r = this.ranges.get(file);
    if (r === undefined) {
      r = { min: deserializeBinaryRow(file.minKey, this.keyTypes), max: deserializeBinaryRow(file.maxKey, this.keyTypes) };
      this.ranges.set(file, r);
    }
    return r;
  }

  private async find(file: DataFileMeta, key: readonly Value[]): Promise<LookupHit | null> {
    const loaded = await this.load(file);
    for (const b of loaded.batches) {
      if (b.rows === 0 || compareKeys(key, b.key(b.rows - 1)) > 0) continue;
      let lo = 0;
      let hi = b.rows;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (compareKeys(b.key(mid), key) < 0) lo = mid + 1;
        else hi = mid;
      }
      if (lo < b.rows && compareKeys(b.key(lo), key) === 0) {
        return { columns: b.columns.map((c) => c.slice(lo, 1)), sequence: b.sequence[lo]!, kind: b.kinds[lo]!, level: file.level };
      }
      return null;
    }
    return null;
  }

  private load(file: DataFileMeta): Promise<LoadedFile> {
    const name = `${file.level}|${file.fileName}`;
    let p = this.cache.get(name);
    if (p !== undefined) {
      // Most recently used last.
      this.cache.delete(name);
      this.cache.set(name, p);
      return p;
    }
    p = this.read(file);
    this.cache.set(name, p);
    while (this.cache.size > CACHED_FILES) this.cache.delete(this.cache.keys().next().value!);
    return p;
  }

  private async read(file: DataFileMeta): Promise<LoadedFile> {
    const { ctx } = this;
    const schema = await ctx.schemaOf(file.schemaId);
    const path = file.externalPath || ctx.pathOf(file.fileName);
    const batches: LoadedFile['batches'][number][] = [];
    for await (const { batch, sequence, valueKind } of readDataFile(ctx.fileIO, { path, fileSize: file.fileSize, schema }, ctx.readFields, {
      keyValue: true,
    })) {
      const columns = batch.data.children;
      const readers = ctx.keyPositions.map((p) => valueReader(columns[p]!, ctx.readFields[p]!.type));
      batches.push({ columns, sequence: sequence!, kinds: valueKind!, rows: batch.numRows, key: (r) => readers.map((read) => read(r)) });
    }
    return { batches };
  }
}
