/**
 * What the reads of a long-lived table keep between calls: manifest lists, manifests, index
 * manifests, deletion vectors and the footers of Parquet data files are written once under unique
 * names and never change, so a service that reads the same table again and again (key lookups)
 * pays for them once. Bounded in memory ({@link DEFAULT_READ_CACHE_BYTES}), least recently used
 * out first. Also remembers the newest snapshot and schema ids seen, so that a read of the latest
 * snapshot checks for newer ones with one round trip instead of re-reading the hints.
 *
 * One cache per table context (`sharedReadCache`): the reads of one `Table` share it.
 */
import {
  readDeletionVectorsAt,
  type DeletionVector,
  type FileIndexFile,
  type IndexManifestEntry,
  type ManifestFileMeta,
  type ParquetDataFile,
  type Snapshot,
  type TableSchema,
} from '@tidemark/format';
import type { FileIO } from '@tidemark/storage';
import type { SchemaManager } from '../schema-manager.js';
import type { SnapshotManager } from '../snapshot-manager.js';
import type { TableContext } from '../table-context.js';
import type { DeletionFileRef } from '../scan/data-split.js';

/** Bytes a table's read cache holds at most (estimated: file bytes, ~256 bytes per decoded entry). */
export const DEFAULT_READ_CACHE_BYTES = 64 * 1024 * 1024;

/** Estimated bytes of one decoded manifest-list or index-manifest entry. */
const ENTRY_BYTES = 256;

interface Slot {
  readonly value: Promise<unknown>;
  size: number;
  /** Measures the settled value again (an opened file grows by the page spans it keeps). */
  remeasure?: () => number;
}

/** Promises by key, least recently used out first once the settled values exceed `maxBytes`. */
class LruPool {
  private readonly slots = new Map<string, Slot>();
  bytes = 0;

  constructor(readonly maxBytes: number) {}

  has(key: string): boolean {
    return this.slots.has(key);
  }

  get<V>(key: string, load: () => Promise<V>, sizeOf: (v: V) => number): Promise<V> {
    const hit = this.slots.get(key);
    if (hit !== undefined) {
      // Most recently used last.
      this.slots.delete(key);
      this.slots.set(key, hit);
      if (hit.remeasure !== undefined) {
        const size = hit.remeasure();
        this.bytes += size - hit.size;
        hit.size = size;
        this.evict();
      }
      return hit.value as Promise<V>;
    }
    const value = load();
    const slot: Slot = { value, size: 0 };
    this.slots.set(key, slot);
    value.then(
      (v) => {
        if (this.slots.get(key) !== slot) return;
        slot.size = sizeOf(v);
        slot.remeasure = () => sizeOf(v);
        this.bytes += slot.size;
        this.evict();
      },
      () => {
        // Failures are not kept: a later read tries again.
        if (this.slots.get(key) === slot) this.slots.delete(key);
      },
    );
    return value;
  }

  private evict(): void {
    for (const [key, slot] of this.slots) {
      if (this.bytes <= this.maxBytes) return;
      this.slots.delete(key);
      this.bytes -= slot.size;
    }
  }
}

/** See the module comment. */
export class ReadCache {
  private readonly metadata: LruPool;
  private readonly rows: LruPool;
  /** Newest snapshot id a read of this table saw (null: none yet). */
  private latestSnapshotId: number | null = null;
  private latestSchemaId: number | null = null;

  /**
   * @param maxBytes bound of the metadata (files and footers)
   * @param maxDecodedBytes bound of the decoded rows key lookups keep (`lookup.cache-max-memory-size`)
   */
  constructor(maxBytes: number = DEFAULT_READ_CACHE_BYTES, maxDecodedBytes: number = DEFAULT_READ_CACHE_BYTES) {
    this.metadata = new LruPool(maxBytes);
    this.rows = new LruPool(maxDecodedBytes);
  }

  /** Bytes held now (estimated): metadata, then decoded rows. */
  get size(): { readonly metadata: number; readonly decoded: number } {
    return { metadata: this.metadata.bytes, decoded: this.rows.bytes };
  }

  /** Manifest list `name` (decoded). */
  manifestList(name: string, load: () => Promise<ManifestFileMeta[]>): Promise<ManifestFileMeta[]> {
    return this.metadata.get(`list:${name}`, load, (v) => v.length * ENTRY_BYTES);
  }

  /** The bytes of manifest `name`. */
  manifest(name: string, load: () => Promise<Uint8Array>): Promise<Uint8Array> {
    return this.metadata.get(`manifest:${name}`, load, (v) => v.byteLength);
  }

  /** Index manifest `name` (decoded). */
  indexManifest(name: string, load: () => Promise<IndexManifestEntry[]>): Promise<IndexManifestEntry[]> {
    return this.metadata.get(`index:${name}`, load, (v) => v.length * ENTRY_BYTES);
  }

  /** An opened Parquet data file (its footer and tail bytes). */
  parquetFile(path: string, open: () => Promise<ParquetDataFile>): Promise<ParquetDataFile> {
    return this.metadata.get(`parquet:${path}`, open, (f) => f.retainedBytes);
  }

  /** A data file's index sidecar (`<data file>.index`), parsed. */
  fileIndex(path: string, load: () => Promise<FileIndexFile>): Promise<FileIndexFile> {
    return this.metadata.get(`fileindex:${path}`, load, (f) => f.byteLength);
  }

  /**
   * Decoded rows of a data file (`key` names the file, the part of it and how it was read), kept
   * for key lookups; `sizeOf` gives their bytes.
   */
  decoded<V>(key: string, decode: () => Promise<V>, sizeOf: (v: V) => number): Promise<V> {
    return this.rows.get(key, decode, sizeOf);
  }

  /**
   * The deletion vectors at `refs` by data file name: those not cached yet are read together (one
   * ranged read per DV index file, as `readDeletionVectorsAt` does).
   */
  async deletionVectors(io: FileIO, refs: readonly DeletionFileRef[]): Promise<Map<string, DeletionVector>> {
    const keyOf = (r: DeletionFileRef): string => `dv:${r.path}@${r.range.offset}+${r.range.length}`;
    const sizeOf = (r: DeletionFileRef) => (): number => r.range.length + 64;
    const missing = refs.filter((r) => !this.metadata.has(keyOf(r)));
    if (missing.length > 0) {
      const reading = readDeletionVectorsAt(io, missing);
      reading.catch(() => undefined);
      for (const r of missing) {
        this.metadata.get(keyOf(r), () => reading.then((m) => m.get(r.range.dataFileName)!), sizeOf(r)).catch(() => undefined);
      }
    }
    const out = new Map<string, DeletionVector>();
    await Promise.all(
      refs.map(async (r) => {
        const one = (): Promise<DeletionVector> => readDeletionVectorsAt(io, [r]).then((m) => m.get(r.range.dataFileName)!);
        out.set(r.range.dataFileName, await this.metadata.get(keyOf(r), one, sizeOf(r)));
      }),
    );
    return out;
  }

  /**
   * The latest snapshot: from the newest id this cache saw, with one round trip that reads it and
   * probes the next id (`SnapshotManager.latestFrom`), else from the hints.
   */
  async latestSnapshot(snapshots: SnapshotManager): Promise<Snapshot | null> {
    const known = this.latestSnapshotId;
    const latest = known === null ? await snapshots.latest() : (await snapshots.latestFrom(known, 1)).latest;
    if (latest !== null) this.latestSnapshotId = latest.id;
    return latest;
  }

  /** The latest schema: from the newest id this cache saw, probing the next id, else by listing. */
  async latestSchema(schemas: SchemaManager): Promise<TableSchema> {
    const known = this.latestSchemaId;
    const latest = known === null ? await schemas.latest() : await schemas.latestFrom(known);
    this.latestSchemaId = latest.id;
    return latest;
  }
}

const caches = new WeakMap<TableContext, ReadCache>();

/** The read cache of the table of `context` (made on first use). */
export function sharedReadCache(context: TableContext): ReadCache {
  let cache = caches.get(context);
  if (cache === undefined) caches.set(context, (cache = new ReadCache(DEFAULT_READ_CACHE_BYTES, context.options.lookupCacheMaxMemorySize)));
  return cache;
}
