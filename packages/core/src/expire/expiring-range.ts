/**
 * The read pass of snapshot expiration: which snapshots expire, and what they reference.
 *
 * One pipelined pass over the candidates (earliest, maxExclusive]. Reading snapshot `id` tells
 * whether `id - 1` expires (Paimon: a snapshot goes once its successor is older than the retention
 * threshold); if it does, the same task reads the delta of `id` (its DELETE entries are the data
 * files the expiring range dropped: `id` is at most the first retained snapshot) and the lists of
 * `id - 1` (its manifests, index files and changelog files), so every metadata file of the range is
 * read once, in one window. The window starts at one task and widens as snapshots keep expiring,
 * so a run that expires little reads little ahead. Results are folded in snapshot order
 * ({@link ExpiringRangeFold}), so the outcome is the same as a sequential read.
 */
import { NotFoundError, type FileIO } from '@tidemark/storage';
import { readManifestEntries, type ManifestFileMeta, type Snapshot, type Tag } from '@tidemark/format';
import type { SnapshotManager } from '../snapshot-manager.js';
import type { TablePaths } from '../table-paths.js';
import { EXPIRE_READ_WINDOW, idRange, mapOrdered, rampingWindow } from './bounded-map.js';
import type { FileRef } from './file-deleter.js';
import { checkAborted, tryReadIndexManifest, tryReadManifestList, type DataFileLocator } from './table-files.js';

/** A delta manifest entry of an expiring snapshot, reduced to what the data-file step needs. */
export interface DeltaEntry {
  readonly add: boolean;
  readonly path: string;
  readonly extra: readonly string[];
  readonly size: number;
}

/** A data file an expiring snapshot's delta deleted: deleted unless a retained snapshot or tag keeps it. */
export interface MarkedFile {
  readonly path: string;
  readonly extra: readonly string[];
  readonly size: number;
  /** Snapshot whose delta deleted the file. */
  readonly deletedIn: number;
}

/** What an expiring snapshot references besides its delta entries. */
export interface ExpiringFiles {
  /** Manifests, index files and statistics files, by name. */
  readonly leaves: ReadonlyArray<readonly [string, FileRef]>;
  /** Manifest lists and index manifests, by name. */
  readonly roots: ReadonlyArray<readonly [string, FileRef]>;
  readonly changelogFiles: readonly FileRef[];
}

/** One task of the read pass: snapshot `id`, and when `id - 1` expires, what the range needs of both. */
export interface PassStep {
  readonly id: number;
  readonly snapshot: Snapshot | null;
  /** Snapshot `id - 1` is retained: `id` is too young (the range ends at `id - 1`). */
  readonly stop: boolean;
  readonly prev?: Snapshot | null;
  /** Entries of the delta of `id`. */
  readonly delta?: readonly DeltaEntry[];
  /** The delta list of `id` (null when gone): the first retained snapshot's is needed again. */
  readonly deltaList?: ManifestFileMeta[] | null;
  /** What `id - 1` references (null when its file is gone). */
  readonly files?: ExpiringFiles | null;
}

/**
 * The expiring snapshots `[earliest, end)` and every file they reference, as candidates: the
 * deletion steps keep what the first retained snapshot (`end`) or a tag still needs. Bounded by the
 * expire limit, as the snapshots themselves.
 */
export interface ExpiringRange {
  readonly earliest: number;
  /** First retained snapshot (`end <= earliest`: nothing expires). */
  readonly end: number;
  /** Snapshot `end` (null when it could not be read). */
  readonly endSnapshot: Snapshot | null;
  /** The delta list of `end`, read by the pass already (null when it was not). */
  readonly endDeltaList: ManifestFileMeta[] | null;
  /** Snapshot `earliest + i` at index `i` (null where the file was gone). */
  readonly expiring: ReadonlyArray<Snapshot | null>;
  /** Data files deleted by the deltas of (earliest, end], by location. */
  readonly marked: Map<string, MarkedFile>;
  /** Manifests, index files and statistics files of the expiring snapshots, by name. */
  readonly leafFiles: Map<string, FileRef>;
  /** Manifest lists and index manifests of the expiring snapshots, by name. */
  readonly rootFiles: Map<string, FileRef>;
  /** Changelog files of the expiring snapshots (not decoupled, not tagged). */
  readonly changelogFiles: FileRef[];
}

/** Folds the steps of the read pass, in snapshot order, into an {@link ExpiringRange}. */
export class ExpiringRangeFold {
  private readonly marked = new Map<string, MarkedFile>();
  private readonly leafFiles = new Map<string, FileRef>();
  private readonly rootFiles = new Map<string, FileRef>();
  private readonly changelogFiles: FileRef[] = [];
  private readonly expiring: Array<Snapshot | null> = [];
  private end: number;
  private endSnapshot: Snapshot | null = null;
  private endDeltaList: ManifestFileMeta[] | null = null;

  constructor(
    private readonly earliest: number,
    maxExclusive: number,
  ) {
    this.end = maxExclusive;
  }

  /** Takes the next step; false when it ends the range (snapshot `step.id - 1` is retained). */
  add(step: PassStep): boolean {
    if (step.stop) {
      this.end = step.id - 1;
      return false;
    }
    // `step.id - 1` expires; folded in snapshot order so that a DELETE followed by an ADD of the
    // same file (level upgrade) keeps it.
    this.expiring.push(step.prev ?? null);
    for (const e of step.delta ?? []) {
      if (e.add) this.marked.delete(e.path);
      else this.marked.set(e.path, { path: e.path, extra: e.extra, size: e.size, deletedIn: step.id });
    }
    for (const [k, v] of step.files?.leaves ?? []) this.leafFiles.set(k, v);
    for (const [k, v] of step.files?.roots ?? []) this.rootFiles.set(k, v);
    for (const f of step.files?.changelogFiles ?? []) this.changelogFiles.push(f);
    this.endSnapshot = step.snapshot;
    this.endDeltaList = step.deltaList ?? null;
    return true;
  }

  range(): ExpiringRange {
    return {
      earliest: this.earliest,
      end: this.end,
      endSnapshot: this.endSnapshot,
      endDeltaList: this.endDeltaList,
      expiring: this.expiring,
      marked: this.marked,
      leafFiles: this.leafFiles,
      rootFiles: this.rootFiles,
      changelogFiles: this.changelogFiles,
    };
  }
}

/** What the read pass needs of the run. */
export interface ReadPassContext {
  readonly io: FileIO;
  readonly paths: TablePaths;
  readonly snapshots: SnapshotManager;
  readonly locator: DataFileLocator;
  /** The changelog outlives the snapshots: changelog manifests stay. */
  readonly decoupled: boolean;
  /** Snapshots whose successor is at least this old (epoch millis) are retained. */
  readonly olderThan: number;
  /** The tags (read once, when first needed). */
  readonly tags: () => Promise<ReadonlyArray<{ name: string; tag: Tag }>>;
  readonly signal?: AbortSignal | undefined;
  /** Told the candidates folded so far. */
  readonly onProgress?: (done: number, total: number) => void;
}

/** Bounds of the candidates: below `min` a snapshot expires regardless of age, none at or above `maxExclusive` does. */
export interface RangeBounds {
  readonly earliest: number;
  readonly min: number;
  readonly maxExclusive: number;
}

/** Reads the snapshots of `bounds` that expire and what they reference, in one pass. */
export async function readExpiringRange(ctx: ReadPassContext, bounds: RangeBounds): Promise<ExpiringRange> {
  return new ExpiringRangeReader(ctx, bounds).read();
}

/** The tasks of the read pass, sharing the reads two neighbouring tasks both need. */
class ExpiringRangeReader {
  private readonly snapshotReads = new Map<number, Promise<Snapshot | null>>();
  // The delta of `id` is read by the task of `id` and its list serves the task of `id + 1` too.
  private readonly deltaReads = new Map<number, Promise<{ list: ManifestFileMeta[] | null; entries: DeltaEntry[] } | null>>();
  /** Index manifests read already (snapshots share one until the index changes). */
  private readonly indexManifestsRead = new Set<string>();

  constructor(
    private readonly ctx: ReadPassContext,
    private readonly bounds: RangeBounds,
  ) {}

  async read(): Promise<ExpiringRange> {
    const { earliest, maxExclusive } = this.bounds;
    checkAborted(this.ctx.signal);
    const fold = new ExpiringRangeFold(earliest, maxExclusive);
    for await (const step of mapOrdered(idRange(earliest + 1, maxExclusive + 1), rampingWindow(EXPIRE_READ_WINDOW), (id) =>
      this.readStep(id),
    )) {
      if (!fold.add(step)) break;
      // Neither task still running needs `id - 1` again.
      this.snapshotReads.delete(step.id - 1);
      this.deltaReads.delete(step.id - 1);
      this.ctx.onProgress?.(step.id - earliest, maxExclusive - earliest);
    }
    this.snapshotReads.clear();
    this.deltaReads.clear();
    return fold.range();
  }

  private readSnapshot(id: number): Promise<Snapshot | null> {
    let p = this.snapshotReads.get(id);
    if (p === undefined) {
      p = this.ctx.snapshots.tryGet(id);
      p.catch(() => undefined); // awaited by the tasks of `id` and `id + 1`
      this.snapshotReads.set(id, p);
    }
    return p;
  }

  private async readStep(id: number): Promise<PassStep> {
    checkAborted(this.ctx.signal);
    const snapshot = await this.readSnapshot(id);
    // A missing successor does not stop the range (the chain is checked by the snapshot batches).
    if (id - 1 >= this.bounds.min && snapshot !== null && snapshot.timeMillis >= this.ctx.olderThan) return { id, snapshot, stop: true };
    const deltaRead = snapshot === null ? Promise.resolve(null) : this.readDelta(snapshot);
    deltaRead.catch(() => undefined); // awaited below and by the task of `id + 1`
    this.deltaReads.set(id, deltaRead);
    // The lists of `id - 1` are read while the delta of `id` is.
    const prevFiles = (async (): Promise<{ prev: Snapshot | null; files: ExpiringFiles | null }> => {
      const prev = await this.readSnapshot(id - 1);
      if (prev === null) return { prev, files: null };
      const first = prev.id === this.bounds.earliest;
      const prevDelta = first ? null : ((await this.deltaReads.get(prev.id)) ?? null);
      return { prev, files: await this.readExpiringMetadata(prev, prevDelta?.list ?? null, first) };
    })();
    const [delta, { prev, files }] = await Promise.all([deltaRead, prevFiles]);
    return { id, snapshot, stop: false, prev, delta: delta?.entries ?? [], deltaList: delta?.list ?? null, files };
  }

  /** Delta entries of a snapshot of (earliest, end] (data files), and its delta list (manifests). */
  private async readDelta(s: Snapshot): Promise<{ list: ManifestFileMeta[] | null; entries: DeltaEntry[] }> {
    const { io, paths, locator } = this.ctx;
    // A missing delta list was processed by an interrupted earlier run.
    const list = await tryReadManifestList(io, paths, s.deltaManifestList);
    const entries: DeltaEntry[] = [];
    for (const m of list ?? []) {
      for await (const e of tolerantEntries(io, paths, m)) {
        entries.push({
          add: e.kind !== 'DELETE',
          path: locator.dataFile(e),
          extra: e.kind === 'DELETE' ? locator.extraFiles(e) : [],
          size: e.file.fileSize,
        });
      }
    }
    return { list, entries };
  }

  /**
   * What an expiring snapshot references besides its delta entries: manifests, index and
   * statistics files (leaves), manifest lists and index manifests (roots), and its changelog files.
   * All are candidates: the manifest step keeps those a retained snapshot or tag names.
   */
  private async readExpiringMetadata(
    s: Snapshot,
    /** The snapshot's delta list when the delta pass read it already. */
    deltaList: ManifestFileMeta[] | null,
    readDeltaList: boolean,
  ): Promise<ExpiringFiles> {
    const { io, paths } = this.ctx;
    const files = new ExpiringFilesBuilder(paths);
    await Promise.all([
      tryReadManifestList(io, paths, s.baseManifestList).then((l) => files.addList(s.baseManifestList, s.baseManifestListSize, l)),
      readDeltaList
        ? tryReadManifestList(io, paths, s.deltaManifestList).then((l) => files.addList(s.deltaManifestList, s.deltaManifestListSize, l))
        : Promise.resolve(),
      this.readChangelog(s, files),
      this.readIndex(s, files),
    ]);
    // Read by the delta pass when `s` is past the earliest snapshot.
    if (!readDeltaList) files.addList(s.deltaManifestList, s.deltaManifestListSize, deltaList);
    if (s.statistics) files.leaves.push([s.statistics, { path: paths.statisticsPath(s.statistics), size: 0 }]);
    return files;
  }

  /** The changelog manifests of `s`, and its changelog files unless a tag keeps the snapshot. */
  private async readChangelog(s: Snapshot, files: ExpiringFilesBuilder): Promise<void> {
    const { io, paths, locator } = this.ctx;
    // A decoupled changelog keeps its manifests until it expires itself.
    if (this.ctx.decoupled || !s.changelogManifestList) return;
    const list = await tryReadManifestList(io, paths, s.changelogManifestList);
    files.addList(s.changelogManifestList, s.changelogManifestListSize, list);
    if (list === null || list.length === 0 || (await this.ctx.tags()).some((t) => t.tag.id === s.id)) return;
    for (const m of list) {
      for await (const e of tolerantEntries(io, paths, m)) {
        if (e.kind !== 'ADD') continue;
        files.changelogFiles.push({ path: locator.dataFile(e), size: e.file.fileSize });
        for (const x of locator.extraFiles(e)) files.changelogFiles.push({ path: x, size: 0 });
      }
    }
  }

  /** The index files of `s` and its index manifest; each index manifest is read once per run. */
  private async readIndex(s: Snapshot, files: ExpiringFilesBuilder): Promise<void> {
    const { io, paths } = this.ctx;
    if (!s.indexManifest || this.indexManifestsRead.has(s.indexManifest)) return;
    this.indexManifestsRead.add(s.indexManifest);
    const index = await tryReadIndexManifest(io, paths, s.indexManifest);
    if (index === null) return;
    for (const e of index) {
      if (e.kind === 'ADD') files.leaves.push([e.fileName, { path: e.externalPath ?? paths.indexPath(e.fileName), size: e.fileSize }]);
    }
    files.roots.push([s.indexManifest, { path: paths.manifestPath(s.indexManifest), size: 0 }]);
  }
}

/** {@link ExpiringFiles} being gathered. */
class ExpiringFilesBuilder implements ExpiringFiles {
  readonly leaves: Array<[string, FileRef]> = [];
  readonly roots: Array<[string, FileRef]> = [];
  readonly changelogFiles: FileRef[] = [];

  constructor(private readonly paths: TablePaths) {}

  /** A manifest list and its manifests; a list deleted by an interrupted earlier run (null) adds nothing. */
  addList(name: string, size: number | undefined, list: ManifestFileMeta[] | null): void {
    if (list === null) return;
    for (const m of list) this.leaves.push([m.fileName, { path: this.paths.manifestPath(m.fileName), size: m.fileSize }]);
    this.roots.push([name, { path: this.paths.manifestPath(name), size: size ?? 0 }]);
  }
}

/** Entries of a manifest of an expiring snapshot; a missing manifest (deleted by an earlier run) yields nothing. */
export async function* tolerantEntries(io: FileIO, paths: TablePaths, m: ManifestFileMeta): ReturnType<typeof readManifestEntries> {
  try {
    yield* readManifestEntries(io, paths.manifestPath(m.fileName));
  } catch (e) {
    if (e instanceof NotFoundError) return;
    throw e;
  }
}
