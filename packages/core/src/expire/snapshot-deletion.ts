/**
 * The deletion steps of snapshot expiration (Paimon's `SnapshotDeletion`): data files, changelog
 * files, then manifests, each its own step over the {@link ExpiringRange} the read pass gathered,
 * keeping what the first retained snapshot or a tag still references ({@link RetainedMetadata}).
 * Each step deletes through the run's {@link FileDeleter} and releases what it held.
 */
import { NotFoundError, type FileIO } from '@tidemark/storage';
import { readManifestEntries, type ManifestFileMeta, type Snapshot, type Tag } from '@tidemark/format';
import type { OtherBranches } from '../branch/other-branches.js';
import type { TablePaths } from '../table-paths.js';
import { METADATA_READ_CONCURRENCY, mapOrdered } from './bounded-map.js';
import type { ExpiringRange, MarkedFile } from './expiring-range.js';
import type { FileDeleter, FileRef } from './file-deleter.js';
import { MaintenanceError } from './maintenance-errors.js';
import { checkAborted, manifestListNames, tryReadIndexManifest, tryReadManifestList, type DataFileLocator } from './table-files.js';

/** A tag with its name. */
export interface NamedTag {
  readonly name: string;
  readonly tag: Tag;
}

/** What the deletion steps need of the run. */
export interface DeletionContext {
  readonly io: FileIO;
  readonly paths: TablePaths;
  readonly locator: DataFileLocator;
  readonly deleter: FileDeleter;
  readonly signal?: AbortSignal | undefined;
  /** The table's other branches, when it has any: their files are kept by every step. */
  readonly others?: OtherBranches | null;
}

/** What the first retained snapshot and the tags reference: kept by every step. */
export interface RetainedMetadata {
  /** Every metadata file name (manifest lists, manifests, index manifests and files, statistics) they reference. */
  readonly names: ReadonlySet<string>;
  /** The manifests of the first retained snapshot's base and delta lists (the files it has live). */
  readonly endManifests: readonly ManifestFileMeta[];
}

/**
 * The first retained snapshot, which the read pass must have read.
 *
 * @throws MaintenanceError when it could not (nothing has been deleted yet).
 */
export function firstRetained(paths: TablePaths, range: ExpiringRange): Snapshot {
  if (range.endSnapshot === null) {
    throw new MaintenanceError(
      `snapshot ${range.end} of ${paths.root}, the first one to retain, cannot be read; expiration stopped without deleting anything`,
    );
  }
  return range.endSnapshot;
}

/**
 * Reads what the first retained snapshot and the tags reference. Their lists are read once, for
 * the names (manifest step) and, for the retained snapshot, for its live data files (data-file
 * step); the retained snapshot's delta list comes from the read pass.
 *
 * @throws MaintenanceError when one of their metadata files is missing: nothing can be proven
 *   unused then, and nothing has been deleted yet.
 */
export async function readRetainedMetadata(
  ctx: Pick<DeletionContext, 'io' | 'paths'>,
  range: ExpiringRange,
  tags: readonly NamedTag[],
): Promise<RetainedMetadata> {
  const endSnapshot = firstRetained(ctx.paths, range);
  const names = new Set<string>();
  const endKnown = range.endDeltaList === null ? {} : { [endSnapshot.deltaManifestList]: range.endDeltaList };
  const keepers: Array<{ s: Snapshot | Tag; what: string; known: Record<string, ManifestFileMeta[]> }> = [
    { s: endSnapshot, what: `snapshot ${range.end}`, known: endKnown },
    ...tags.map(({ name, tag }) => ({ s: tag, what: `tag '${name}'`, known: {} })),
  ];
  let endManifests: ManifestFileMeta[] | null = null;
  for await (const { names: n, lists } of mapOrdered(keepers, METADATA_READ_CONCURRENCY, (k) =>
    metadataNames(ctx.io, ctx.paths, k.s, k.what, k.known),
  )) {
    for (const name of n) names.add(name);
    endManifests ??= lists; // keepers[0]
  }
  return { names, endManifests: endManifests ?? [] };
}

/**
 * Step 1: data files deleted by snapshots (earliest, end], and their extra files. Never deletes
 * what the first retained snapshot still has (covers unusual histories such as rollbacks), nor
 * what a tag has: per Paimon, the newest tag before the deleting snapshot.
 */
export async function deleteDataFiles(
  ctx: DeletionContext,
  range: ExpiringRange,
  retained: RetainedMetadata,
  tags: readonly NamedTag[],
): Promise<void> {
  const { io, paths, locator } = ctx;
  const marked = range.marked;
  if (marked.size > 0) await unmarkLive(io, paths, locator, retained.endManifests, marked, `snapshot ${range.end}`);
  for (let i = 0; i < tags.length && marked.size > 0; i++) {
    const { name, tag } = tags[i]!;
    const governed = governedByTag(marked, tag.id, tags[i + 1]?.tag.id ?? Number.MAX_SAFE_INTEGER);
    if (governed.size === 0) continue;
    const candidates = [...governed.keys()];
    await unmarkLive(io, paths, locator, await liveLists(io, paths, tag, `tag '${name}'`), governed, `tag '${name}'`);
    for (const k of candidates) if (!governed.has(k)) marked.delete(k);
  }
  if (ctx.others && marked.size > 0) await ctx.others.keepUsed(marked, locator, ctx.signal);
  await ctx.deleter.deleteAll(
    'data-files',
    (function* () {
      for (const m of marked.values()) {
        yield { path: m.path, size: m.size };
        for (const x of m.extra) yield { path: x, size: 0 };
      }
    })(),
  );
  marked.clear();
}

/** The marked files a tag of snapshot `tagId` governs: those deleted by snapshots in (tagId, nextTagId]. */
export function governedByTag(marked: ReadonlyMap<string, MarkedFile>, tagId: number, nextTagId: number): Map<string, MarkedFile> {
  const governed = new Map<string, MarkedFile>();
  for (const [k, v] of marked) if (v.deletedIn > tagId && v.deletedIn <= nextTagId) governed.set(k, v);
  return governed;
}

/** Step 2: changelog files of the expired snapshots (the read pass left out those of tagged snapshots). */
export async function deleteChangelogFiles(ctx: DeletionContext, range: ExpiringRange): Promise<void> {
  checkAborted(ctx.signal);
  const files = ctx.others ? await ctx.others.unused(range.changelogFiles, ctx.locator, ctx.signal) : range.changelogFiles;
  await ctx.deleter.deleteAll('changelog-files', files);
  range.changelogFiles.length = 0;
}

/**
 * Step 3: manifests, index files and statistics, then manifest lists and index manifests, that
 * no retained snapshot or tag names. Leaves go before the roots that name them: a rerun after a
 * kill finds the leaves left over through their roots.
 */
export async function deleteManifests(ctx: DeletionContext, range: ExpiringRange, retained: RetainedMetadata): Promise<void> {
  checkAborted(ctx.signal);
  await ctx.deleter.deleteAll('manifests', unused(range.leafFiles, retained.names));
  await ctx.deleter.deleteAll('manifest-lists', unused(range.rootFiles, retained.names));
  range.leafFiles.clear();
  range.rootFiles.clear();
}

/** The files of `files` whose names `keep` does not hold. */
export function* unused(files: ReadonlyMap<string, FileRef>, keep: ReadonlySet<string>): Generator<FileRef> {
  for (const [name, f] of files) if (!keep.has(name)) yield f;
}

/**
 * Removes from `marked` every file live in a retained snapshot or tag, given the metas of its base
 * and delta lists. Its manifests must be readable: otherwise nothing can be proven safe and the
 * run stops. Manifests are read in a bounded window; the net count per file does not depend on
 * the order.
 */
async function unmarkLive(
  io: FileIO,
  paths: TablePaths,
  locator: DataFileLocator,
  manifests: readonly ManifestFileMeta[],
  marked: Map<string, MarkedFile>,
  what: string,
): Promise<void> {
  const readNet = async (m: ManifestFileMeta): Promise<Map<string, number>> => {
    const net = new Map<string, number>();
    try {
      for await (const e of readManifestEntries(io, paths.manifestPath(m.fileName))) {
        const path = locator.dataFile(e);
        if (!marked.has(path)) continue;
        net.set(path, (net.get(path) ?? 0) + (e.kind === 'ADD' ? 1 : -1));
      }
    } catch (err) {
      if (err instanceof NotFoundError) throw missing(paths, what, m.fileName);
      throw err;
    }
    return net;
  };
  const net = new Map<string, number>();
  for await (const part of mapOrdered(manifests, METADATA_READ_CONCURRENCY, readNet)) {
    for (const [path, n] of part) net.set(path, (net.get(path) ?? 0) + n);
  }
  for (const [path, n] of net) if (n > 0) marked.delete(path);
}

/** The manifests of a retained snapshot's or tag's base and delta lists, which must exist. */
async function liveLists(io: FileIO, paths: TablePaths, s: Snapshot | Tag, what: string): Promise<ManifestFileMeta[]> {
  const out: ManifestFileMeta[] = [];
  for (const listName of [s.baseManifestList, s.deltaManifestList]) {
    const list = await tryReadManifestList(io, paths, listName);
    if (list === null) throw missing(paths, what, listName);
    out.push(...list);
  }
  return out;
}

function missing(paths: TablePaths, what: string, name: string): MaintenanceError {
  return new MaintenanceError(
    `${what} of ${paths.root} references manifest file '${name}', which does not exist; expiration stopped before deleting data files that ${what} might need`,
  );
}

/**
 * Every metadata file name a retained snapshot or tag references, and the manifests of its base
 * and delta lists (the files it has live), so that the lists are read once.
 */
async function metadataNames(
  io: FileIO,
  paths: TablePaths,
  s: Snapshot | Tag,
  what: string,
  /** Lists already read, by name. */
  known: Readonly<Record<string, ManifestFileMeta[]>>,
): Promise<{ names: string[]; lists: ManifestFileMeta[] }> {
  const names: string[] = [];
  const lists: ManifestFileMeta[] = [];
  const listNames = manifestListNames(s);
  const read = await Promise.all(listNames.map((n) => known[n] ?? tryReadManifestList(io, paths, n)));
  for (const [i, listName] of listNames.entries()) {
    names.push(listName);
    const list = read[i]!;
    if (list === null) throw missing(paths, what, listName);
    for (const m of list) names.push(m.fileName);
    // manifestListNames gives the base and the delta list first.
    if (i < 2) lists.push(...list);
  }
  if (s.indexManifest) {
    names.push(s.indexManifest);
    const index = await tryReadIndexManifest(io, paths, s.indexManifest);
    if (index === null) throw missing(paths, what, s.indexManifest);
    for (const e of index) names.push(e.fileName);
  }
  if (s.statistics) names.push(s.statistics);
  return { names, lists };
}
