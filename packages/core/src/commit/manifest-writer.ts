/**
 * Writing data manifests and manifest lists for commits: rolling at `manifest.target-file-size`
 * and computing each manifest's {@link ManifestFileMeta} summary (counts, partition stats, schema,
 * bucket, level and row-id ranges) exactly as Paimon does.
 */
import { randomUUID } from 'node:crypto';
import type { FileIO } from '@tidemark/storage';
import {
  INDEX_FILE_PREFIX,
  deserializeBinaryRow,
  encodeHashIndex,
  hashIndexFileMeta,
  indexFileName,
  serializeBinaryRow,
  writeIndexManifest,
  writeManifestFile,
  writeManifestList,
  type AvroWriteOptions,
  type DataType,
  type IndexFileMeta,
  type IndexManifestEntry,
  type ManifestEntry,
  type ManifestFileMeta,
  type SimpleStats,
  type Value,
} from '@tidemark/format';
import { compareValues } from '../predicate.js';
import type { TablePaths } from '../table-paths.js';
import type { MetadataCache } from './metadata-cache.js';

/** Index files (`index-<uuid>-<n>`) live in `index/`; index manifests (`index-manifest-…`) in `manifest/`. */
function isIndexFile(name: string): boolean {
  return name.startsWith(INDEX_FILE_PREFIX) && !name.startsWith('index-manifest-');
}

/** Generates `manifest-<uuid>-<n>` / `manifest-list-<uuid>-<n>` names, one uuid per instance (as Java's path factory). */
export class ManifestNames {
  readonly uuid = randomUUID();
  private manifestCount = 0;
  private listCount = 0;
  private indexManifestCount = 0;
  private indexFileCount = 0;

  /**
   * Name prefixes of every file these names can produce (manifests, manifest lists and index
   * manifests of this uuid), for the in-flight record that protects them from orphan cleanup.
   */
  inflightPrefixes(): string[] {
    const indexFiles = indexFileName(this.uuid, 0).slice(0, -1);
    return [`manifest-${this.uuid}-`, `manifest-list-${this.uuid}-`, `index-manifest-${this.uuid}-`, indexFiles];
  }

  indexManifest(): string {
    return `index-manifest-${this.uuid}-${this.indexManifestCount++}`;
  }

  /** Name of an index file the commit writes itself (a merged hash index). */
  indexFile(): string {
    return indexFileName(this.uuid, this.indexFileCount++);
  }

  manifest(): string {
    return `manifest-${this.uuid}-${this.manifestCount++}`;
  }

  manifestList(): string {
    return `manifest-list-${this.uuid}-${this.listCount++}`;
  }
}

/** Min/max/null-count accumulator over partition rows. */
class PartitionStatsCollector {
  private readonly mins: Value[];
  private readonly maxs: Value[];
  private readonly nulls: number[];
  private readonly seen = new Set<string>();

  constructor(private readonly types: readonly DataType[]) {
    this.mins = types.map(() => null);
    this.maxs = types.map(() => null);
    this.nulls = types.map(() => 0);
  }

  add(partition: Uint8Array): void {
    if (this.types.length === 0) return;
    const values = deserializeBinaryRow(partition, this.types);
    values.forEach((v, i) => {
      if (v === null) {
        this.nulls[i]!++;
        return;
      }
      const min = this.mins[i] ?? null;
      const max = this.maxs[i] ?? null;
      if (min === null || compareValues(v, min) < 0) this.mins[i] = v;
      if (max === null || compareValues(v, max) > 0) this.maxs[i] = v;
    });
  }

  result(): SimpleStats {
    return {
      minValues: serializeBinaryRow(this.types, this.mins),
      maxValues: serializeBinaryRow(this.types, this.maxs),
      nullCounts: [...this.nulls],
    };
  }
}

/** Accumulates the ManifestFileMeta summary of one manifest's entries. */
class ManifestSummary {
  numAdded = 0;
  numDeleted = 0;
  schemaId = 0;
  minBucket = Number.POSITIVE_INFINITY;
  maxBucket = Number.NEGATIVE_INFINITY;
  minLevel = Number.POSITIVE_INFINITY;
  maxLevel = Number.NEGATIVE_INFINITY;
  minRowId: number | null = null;
  maxRowId: number | null = null;
  allHaveRowIds = true;
  count = 0;
  private readonly partitionStats: PartitionStatsCollector;

  constructor(partitionTypes: readonly DataType[]) {
    this.partitionStats = new PartitionStatsCollector(partitionTypes);
  }

  add(e: ManifestEntry): void {
    this.count++;
    if (e.kind === 'ADD') this.numAdded++;
    else this.numDeleted++;
    this.schemaId = Math.max(this.schemaId, e.file.schemaId);
    this.minBucket = Math.min(this.minBucket, e.bucket);
    this.maxBucket = Math.max(this.maxBucket, e.bucket);
    this.minLevel = Math.min(this.minLevel, e.file.level);
    this.maxLevel = Math.max(this.maxLevel, e.file.level);
    this.partitionStats.add(e.partition);
    const first = e.file.firstRowId ?? null;
    if (first === null) this.allHaveRowIds = false;
    else {
      const last = first + e.file.rowCount - 1;
      this.minRowId = this.minRowId === null ? first : Math.min(this.minRowId, first);
      this.maxRowId = this.maxRowId === null ? last : Math.max(this.maxRowId, last);
    }
  }

  meta(fileName: string, fileSize: number): ManifestFileMeta {
    const empty = this.count === 0;
    const rowIds = !empty && this.allHaveRowIds;
    return {
      fileName,
      fileSize,
      numAddedFiles: this.numAdded,
      numDeletedFiles: this.numDeleted,
      partitionStats: this.partitionStats.result(),
      schemaId: this.schemaId,
      minBucket: empty ? null : this.minBucket,
      maxBucket: empty ? null : this.maxBucket,
      minLevel: empty ? null : this.minLevel,
      maxLevel: empty ? null : this.maxLevel,
      minRowId: rowIds ? this.minRowId : null,
      maxRowId: rowIds ? this.maxRowId : null,
    };
  }
}

/** Rough Avro-encoded size of an entry, used to roll manifests before encoding them. */
function estimatedSize(e: ManifestEntry): number {
  const f = e.file;
  let n = 64 + e.partition.length + f.fileName.length + f.minKey.length + f.maxKey.length;
  for (const s of [f.keyStats, f.valueStats]) n += s.minValues.length + s.maxValues.length + 2 * (s.nullCounts?.length ?? 0);
  for (const x of f.extraFiles) n += x.length + 1;
  n += (f.embeddedIndex?.length ?? 0) + (f.externalPath?.length ?? 0);
  for (const c of f.valueStatsCols ?? []) n += c.length + 1;
  return n;
}

export interface ManifestWriterOptions {
  readonly targetFileSize: number;
  readonly avro: AvroWriteOptions;
}

/** Writes manifests and manifest lists under a table's `manifest/` directory, recording every file it creates. */
export class ManifestWriter {
  /** Names of every manifest and manifest list this writer created (for clean-up of failed commits). */
  readonly written: string[] = [];
  /** How many files this writer wrote (recycled names included): whether anything was written since some point. */
  filesWritten = 0;

  constructor(
    private readonly fileIO: FileIO,
    private readonly paths: TablePaths,
    private readonly partitionTypes: readonly DataType[],
    private readonly options: ManifestWriterOptions,
    private readonly names: ManifestNames = new ManifestNames(),
    /** Where written manifests and lists are remembered, so later commits need not read them back. */
    private readonly cache?: MetadataCache,
  ) {}

  /**
   * Writes `entries` into one or more manifests, rolling when the estimated (uncompressed) size
   * reaches the target size; at most one manifest's entries are held in memory. Returns their metas
   * (none for no entries).
   */
  async writeEntries(entries: Iterable<ManifestEntry> | AsyncIterable<ManifestEntry>): Promise<ManifestFileMeta[]> {
    const { metas, pending } = await this.writeEntriesDeferred(entries);
    await pending;
    return metas;
  }

  /**
   * As {@link writeEntries}, but the upload of the last manifest is returned as `pending` instead
   * of awaited: its meta (size included) is known once it is encoded, so the manifest list naming
   * it can be uploaded at the same time. The caller must await `pending`.
   */
  async writeEntriesDeferred(
    entries: Iterable<ManifestEntry> | AsyncIterable<ManifestEntry>,
  ): Promise<{ metas: ManifestFileMeta[]; pending: Promise<void> }> {
    const metas: ManifestFileMeta[] = [];
    let chunk: ManifestEntry[] = [];
    let size = 0;
    for await (const e of entries) {
      chunk.push(e);
      size += estimatedSize(e);
      if (size >= this.options.targetFileSize) {
        const one = await this.encodeOne(chunk);
        await one.upload();
        metas.push(one.meta);
        chunk = [];
        size = 0;
      }
    }
    if (chunk.length === 0) return { metas, pending: Promise.resolve() };
    const last = await this.encodeOne(chunk);
    metas.push(last.meta);
    return { metas, pending: handledLater(last.upload()) };
  }

  private async encodeOne(entries: readonly ManifestEntry[]): Promise<{ meta: ManifestFileMeta; upload: () => Promise<void> }> {
    const summary = new ManifestSummary(this.partitionTypes);
    for (const e of entries) summary.add(e);
    const bytes = await writeManifestFile(entries, this.options.avro);
    const name = this.names.manifest();
    this.filesWritten++;
    this.written.push(name);
    this.cache?.putManifest(name, entries, bytes.length);
    return { meta: summary.meta(name, bytes.length), upload: () => this.fileIO.write(this.paths.manifestPath(name), bytes) };
  }

  /** Writes a manifest list (never rolled); returns its name and size. */
  async writeList(metas: readonly ManifestFileMeta[]): Promise<{ name: string; size: number }> {
    const { name, size, pending } = await this.writeListDeferred(metas);
    await pending;
    return { name, size };
  }

  /** As {@link writeList}, with the upload returned as `pending` (the caller must await it). */
  async writeListDeferred(metas: readonly ManifestFileMeta[]): Promise<{ name: string; size: number; pending: Promise<void> }> {
    const bytes = await writeManifestList(metas, this.options.avro);
    const recycled = this.spareLists.pop();
    const name = recycled ?? this.names.manifestList();
    this.filesWritten++;
    if (recycled === undefined) this.written.push(name);
    this.cache?.putList(name, [...metas]);
    return { name, size: bytes.length, pending: handledLater(this.fileIO.write(this.paths.manifestPath(name), bytes)) };
  }

  /**
   * Manifest lists this writer wrote that no snapshot references or ever will (a lost attempt's
   * base list): the next lists are written under their names, overwriting them, which saves a
   * DELETE per lost attempt. Still in {@link written} until deleted.
   */
  private readonly spareLists: string[] = [];

  /** Offers `name` (a list of this writer that nothing references) for the next list written. */
  recycleList(name: string): void {
    if (!this.spareLists.includes(name)) this.spareLists.push(name);
  }

  /** The recycled list names not written again (to delete); the writer forgets them. */
  takeSpareLists(): string[] {
    return this.spareLists.splice(0);
  }

  /** Writes an index manifest (never rolled); returns its name. */
  async writeIndexManifest(entries: readonly IndexManifestEntry[]): Promise<string> {
    const bytes = await writeIndexManifest(entries, this.options.avro);
    const name = this.names.indexManifest();
    this.filesWritten++;
    this.written.push(name);
    await this.fileIO.write(this.paths.manifestPath(name), bytes);
    return name;
  }

  /** Writes a hash index file under `index/` holding `hashes`. */
  async writeHashIndex(hashes: Int32Array): Promise<IndexFileMeta> {
    const bytes = encodeHashIndex(hashes);
    const name = this.names.indexFile();
    this.filesWritten++;
    this.written.push(name);
    await this.fileIO.write(this.paths.indexPath(name), bytes);
    return hashIndexFileMeta(name, bytes.length, hashes.length);
  }

  /** Deletes the given files this writer created (best effort) and forgets them. */
  async deleteWritten(names: Iterable<string>): Promise<void> {
    const drop = new Set(names);
    const paths: string[] = [];
    for (const n of drop) paths.push(isIndexFile(n) ? this.paths.indexPath(n) : this.paths.manifestPath(n));
    try {
      // One file (a lost attempt's base list, typically): a plain DELETE, which an S3 store serves
      // for less CPU on both ends than a batch delete request of one key.
      if (paths.length === 1) await this.fileIO.delete(paths[0]!);
      else if (paths.length > 1) await this.fileIO.deleteMany(paths);
    } catch {
      // Left-over manifests are orphans that orphan-file cleanup removes; never mask the real error.
    }
    this.cache?.forget(drop);
    const keep = this.written.filter((n) => !drop.has(n));
    this.written.length = 0;
    this.written.push(...keep);
  }
}

/**
 * `upload`, marked as handled: the caller awaits it only after more work (encoding the manifest
 * list, the next attempt's checks), and an upload that fails before then would otherwise be an
 * unhandled rejection, which ends a CLI process in the middle of its commit. The caller still sees
 * the failure when it awaits the promise.
 */
function handledLater<T>(upload: Promise<T>): Promise<T> {
  upload.catch(() => undefined);
  return upload;
}
