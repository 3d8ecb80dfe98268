/**
 * Reading the entries of a snapshot's manifests and folding ADD/DELETE pairs by file identity
 * (docs/format.md, "Entry identity and folding"). Kept in commit/ so the commit path has no dependency on the scanner.
 */
import type { FileIO } from '@tidemark/storage';
import {
  fileEntryIdentity,
  readManifestEntries,
  readManifestList,
  type ManifestEntry,
  type ManifestFileMeta,
  type Snapshot,
} from '@tidemark/format';
import { mapOrdered } from '../expire/bounded-map.js';
import type { TablePaths } from '../table-paths.js';
import { CommitConflictError } from './commit-errors.js';
import type { ManifestSource } from './metadata-cache.js';

/**
 * The manifests holding every live file of `snapshot` (its base list followed by its delta list).
 * `source` (e.g. a committer's metadata cache) serves lists already read; default: storage.
 */
export async function dataManifests(
  fileIO: FileIO,
  paths: TablePaths,
  snapshot: Snapshot,
  source?: ManifestSource,
): Promise<ManifestFileMeta[]> {
  const read = (name: string): Promise<ManifestFileMeta[]> =>
    source !== undefined ? source.list(name) : readManifestList(fileIO, paths.manifestPath(name));
  const [base, delta] = await Promise.all([read(snapshot.baseManifestList), read(snapshot.deltaManifestList)]);
  return [...base, ...delta];
}

/** Manifests {@link manifestEntries} reads ahead of the one being folded. */
const MANIFEST_READ_AHEAD = 8;

/**
 * Streams the entries of `manifests` in order (from `source` when given, else from storage). A
 * few manifests are read at once (on an object store, one after another costs a round trip per
 * manifest); at most {@link MANIFEST_READ_AHEAD} decoded manifests are held.
 */
export async function* manifestEntries(
  fileIO: FileIO,
  paths: TablePaths,
  manifests: readonly ManifestFileMeta[],
  source?: ManifestSource,
): AsyncGenerator<ManifestEntry> {
  const decode = async (m: ManifestFileMeta): Promise<ManifestEntry[]> => {
    const entries: ManifestEntry[] = [];
    const it = source !== undefined ? source.entries(m.fileName) : readManifestEntries(fileIO, paths.manifestPath(m.fileName));
    for await (const e of it) entries.push(e);
    return entries;
  };
  for await (const entries of mapOrdered(manifests, MANIFEST_READ_AHEAD, decode)) yield* entries;
}

/**
 * Folds entries in order into a map identity → entry (insertion ordered): an ADD inserts (adding a
 * live identity again is an error), a DELETE removes its ADD or, when the ADD is in an older
 * manifest, is kept as a DELETE.
 */
export class EntryFolder {
  readonly entries = new Map<string, ManifestEntry>();

  add(e: ManifestEntry): void {
    const id = fileEntryIdentity(e);
    if (e.kind === 'ADD') {
      if (this.entries.has(id)) {
        throw new CommitConflictError(`trying to add file '${e.file.fileName}' which is already added`, [e.file.fileName]);
      }
      this.entries.set(id, e);
    } else if (this.entries.has(id)) {
      this.entries.delete(id);
    } else {
      this.entries.set(id, e);
    }
  }

  async addAll(entries: AsyncIterable<ManifestEntry> | Iterable<ManifestEntry>): Promise<this> {
    for await (const e of entries) this.add(e);
    return this;
  }

  /** Remaining DELETE entries (a complete snapshot must have none). */
  deletes(): ManifestEntry[] {
    return [...this.entries.values()].filter((e) => e.kind === 'DELETE');
  }
}

/** Hex of a partition's bytes: a map key for partition sets. */
export function partitionKey(partition: Uint8Array): string {
  return Buffer.from(partition.buffer, partition.byteOffset, partition.byteLength).toString('hex');
}

/**
 * Live ADD entries of `snapshot` whose partition passes `partitionFilter` (all when omitted).
 * Only the live map of the selected partitions is held in memory; manifests are streamed.
 *
 * @throws CommitConflictError when the snapshot's manifests do not fold cleanly (corrupt table).
 */
export async function liveEntries(
  fileIO: FileIO,
  paths: TablePaths,
  snapshot: Snapshot,
  partitionFilter?: (partition: Uint8Array) => boolean,
  source?: ManifestSource,
): Promise<Map<string, ManifestEntry>> {
  const folder = new EntryFolder();
  for await (const e of manifestEntries(fileIO, paths, await dataManifests(fileIO, paths, snapshot, source), source)) {
    if (partitionFilter === undefined || partitionFilter(e.partition)) folder.add(e);
  }
  const leftover = folder.deletes();
  if (leftover.length > 0) {
    throw new CommitConflictError(
      `snapshot ${snapshot.id} deletes files that none of its manifests adds (corrupt table)`,
      leftover.map((e) => e.file.fileName),
      snapshot.id,
    );
  }
  return folder.entries;
}

/** Sum of row counts of the live files of `snapshot` (ADD minus DELETE over all its manifests). */
export async function liveRecordCount(fileIO: FileIO, paths: TablePaths, snapshot: Snapshot, source?: ManifestSource): Promise<number> {
  let total = 0;
  for await (const e of manifestEntries(fileIO, paths, await dataManifests(fileIO, paths, snapshot, source), source)) {
    total += e.kind === 'ADD' ? e.file.rowCount : -e.file.rowCount;
  }
  return total;
}
