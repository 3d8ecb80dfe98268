/**
 * In-process cache of a table's immutable metadata files for a long-lived committer: manifest
 * lists and manifests are written once under unique names and never change, so what a commit
 * read or wrote can serve every later commit of the same process. Without it every commit re-reads
 * the latest snapshot's manifest lists and the manifests it merges or checks, a cost that grows
 * with the table's history.
 *
 * Bounded: at most {@link MetadataCacheLimits.lists} manifest lists and
 * {@link MetadataCacheLimits.entries} manifest entries in total, least recently used out first.
 * A manifest with more entries than the whole bound is streamed and never cached.
 */
import type { FileIO } from '@tidemark/storage';
import {
  decodeManifestEntries,
  decodeManifestList,
  readManifestEntries,
  readManifestList,
  type ManifestEntry,
  type ManifestFileMeta,
} from '@tidemark/format';
import type { TablePaths } from '../table-paths.js';

/** Where the commit path gets manifest lists and manifest entries from (cached or straight from storage). */
export interface ManifestSource {
  /** The metas of manifest list `name`. */
  list(name: string): Promise<ManifestFileMeta[]>;
  /** The entries of manifest `name`, in file order. */
  entries(name: string): AsyncIterable<ManifestEntry>;
}

/** A {@link ManifestSource} without a cache: every call reads storage. */
export function storageManifestSource(fileIO: FileIO, paths: TablePaths): ManifestSource {
  return {
    list: (name) => readManifestList(fileIO, paths.manifestPath(name)),
    entries: (name) => readManifestEntries(fileIO, paths.manifestPath(name)),
  };
}

/** Size bounds of a {@link MetadataCache}. */
export interface MetadataCacheLimits {
  /** Manifest lists kept (default 64). */
  readonly lists: number;
  /** Manifest entries kept over all cached manifests (default 50,000: tens of MiB at most). */
  readonly entries: number;
}

const DEFAULT_LIMITS: MetadataCacheLimits = { lists: 64, entries: 50_000 };

interface CachedManifest {
  readonly entries: readonly ManifestEntry[];
  /** Size of the file the entries came from (what its manifest list must record). */
  readonly size: number;
}

/** A bounded, least-recently-used cache of one table's manifest lists and manifests. */
export class MetadataCache implements ManifestSource {
  private readonly lists = new Map<string, ManifestFileMeta[]>();
  private readonly manifests = new Map<string, CachedManifest>();
  private entryCount = 0;
  private readonly limits: MetadataCacheLimits;

  constructor(
    private readonly fileIO: FileIO,
    private readonly paths: TablePaths,
    limits: Partial<MetadataCacheLimits> = {},
  ) {
    this.limits = { ...DEFAULT_LIMITS, ...limits };
  }

  async list(name: string): Promise<ManifestFileMeta[]> {
    const hit = this.lists.get(name);
    if (hit !== undefined) {
      this.touch(this.lists, name, hit);
      return hit;
    }
    // Concurrent readers of one list (the base check and the merge of one attempt) share a read.
    let reading = this.readingLists.get(name);
    if (reading === undefined) {
      reading = readManifestList(this.fileIO, this.paths.manifestPath(name)).finally(() => this.readingLists.delete(name));
      this.readingLists.set(name, reading);
    }
    const metas = await reading;
    this.putList(name, metas);
    return metas;
  }

  private readonly readingLists = new Map<string, Promise<ManifestFileMeta[]>>();

  async *entries(name: string): AsyncGenerator<ManifestEntry> {
    const hit = this.cachedEntries(name);
    if (hit !== undefined) {
      yield* hit;
      return;
    }
    const bytes = await this.fileIO.read(this.paths.manifestPath(name));
    yield* this.decode(name, bytes);
  }

  /** The cached entries of manifest `name` and the size of its file, or undefined (no I/O). */
  cached(name: string): CachedManifest | undefined {
    const hit = this.manifests.get(name);
    if (hit !== undefined) this.touch(this.manifests, name, hit);
    return hit;
  }

  private cachedEntries(name: string): readonly ManifestEntry[] | undefined {
    return this.cached(name)?.entries;
  }

  /**
   * Decodes the bytes of manifest `name` (read by the caller, e.g. to check their size), caching
   * the entries when they fit the bound.
   */
  async *decode(name: string, bytes: Uint8Array): AsyncGenerator<ManifestEntry> {
    const path = this.paths.manifestPath(name);
    let kept: ManifestEntry[] | null = [];
    for await (const e of decodeManifestEntries(bytes, path)) {
      if (kept !== null) {
        kept.push(e);
        if (kept.length > this.limits.entries) kept = null;
      }
      yield e;
    }
    if (kept !== null) this.putManifest(name, kept, bytes.length);
  }

  /** Records a manifest list this process wrote (or decoded from bytes it holds). */
  putList(name: string, metas: ManifestFileMeta[]): void {
    this.lists.delete(name);
    this.lists.set(name, metas);
    while (this.lists.size > this.limits.lists) this.lists.delete(this.lists.keys().next().value!);
  }

  /** Records a manifest list from its encoded bytes. */
  async putListBytes(name: string, bytes: Uint8Array): Promise<void> {
    this.putList(name, await decodeManifestList(bytes, this.paths.manifestPath(name)));
  }

  /** Records the entries of a manifest this process wrote (`size`: bytes of its file). */
  putManifest(name: string, entries: readonly ManifestEntry[], size: number): void {
    if (entries.length > this.limits.entries) return;
    const old = this.manifests.get(name);
    if (old !== undefined) {
      this.manifests.delete(name);
      this.entryCount -= old.entries.length;
    }
    this.manifests.set(name, { entries, size });
    this.entryCount += entries.length;
    while (this.entryCount > this.limits.entries) {
      const [oldest, dropped] = this.manifests.entries().next().value!;
      this.manifests.delete(oldest);
      this.entryCount -= dropped.entries.length;
    }
  }

  /** Drops files a failed commit deleted (their names are never reused, this only frees memory). */
  forget(names: Iterable<string>): void {
    for (const n of names) {
      this.lists.delete(n);
      const old = this.manifests.get(n);
      if (old !== undefined) {
        this.manifests.delete(n);
        this.entryCount -= old.entries.length;
      }
    }
  }

  private touch<V>(map: Map<string, V>, key: string, value: V): void {
    map.delete(key);
    map.set(key, value);
  }
}
