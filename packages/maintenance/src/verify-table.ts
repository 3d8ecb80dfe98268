/**
 * `verify`: an fsck for operators. Reads everything a snapshot references and reports what is
 * wrong; never writes or deletes anything.
 *
 * Per checked snapshot: its manifest lists decode, every manifest has its recorded size and
 * decodes, every live data file exists with its recorded size, decodes, holds its recorded row
 * count, and its values lie within the manifest's value statistics (null counts equal, min/max
 * bounds hold; append files only). Across the table: snapshot ids are contiguous from the earliest
 * to the latest, each snapshot file decodes, and the EARLIEST/LATEST hints do not point outside
 * that range. Deletion-vector index files exist with their recorded size, decode, and name live
 * data files of their bucket. Files shared by several snapshots are checked once.
 *
 * Changelogs: the changelog manifest list of each checked snapshot, and with `all` every
 * long-lived changelog (`changelog/changelog-<id>`, contiguous ids, below the earliest snapshot)
 * are checked like the data: manifests decode with their recorded sizes, every changelog file
 * exists with its recorded size and row count.
 *
 * Each check is a step of {@link TableVerifier}; the data-file check is in `verify-data-file.ts`.
 */
import {
  INDEX_TYPE_DELETION_VECTORS,
  decodeDeletionVectorFile,
  readIndexManifest,
  readManifestEntries,
  readManifestList,
  type IndexManifestEntry,
  type ManifestEntry,
  type ManifestFileMeta,
  type Snapshot,
} from '@tidemark/format';
import { ChangelogManager, checkAborted, DataFileLocator, type Table } from '@tidemark/core';
import { checkDataFile, message } from './verify-data-file.js';

export interface VerifyOptions {
  /** Check only this snapshot (default: the latest). */
  readonly snapshotId?: number;
  /** Check every retained snapshot. */
  readonly all?: boolean;
  /** Skip decoding data files (existence and size only). */
  readonly metadataOnly?: boolean;
  readonly signal?: AbortSignal;
  /** Called after each data file is checked. */
  readonly onProgress?: (done: number, total: number) => void;
}

/** One thing found wrong. */
export interface VerifyProblem {
  /** File (or hint) concerned. */
  readonly path: string;
  /** Snapshot through which it was reached, when any. */
  readonly snapshotId: number | null;
  readonly problem: string;
}

export interface VerifySummary {
  readonly table: string;
  readonly ok: boolean;
  readonly snapshotsChecked: number[];
  /** Long-lived changelogs checked (`all` only). */
  readonly changelogsChecked: number[];
  readonly manifestsChecked: number;
  readonly dataFilesChecked: number;
  readonly rowsChecked: number;
  readonly problems: readonly VerifyProblem[];
}

/** Checks `table` read-only and lists every problem found. */
export async function verifyTable(table: Table, options: VerifyOptions = {}): Promise<VerifySummary> {
  return new TableVerifier(table, options).run();
}

/** A data file to check, and the snapshot (or changelog) through which it was reached. */
interface DataFileWork {
  readonly entry: ManifestEntry;
  readonly path: string;
  readonly snapshotId: number;
}

/** One `verify` run: the steps, and what they found and checked so far. */
class TableVerifier {
  private readonly io: Table['fileIO'];
  private readonly paths: Table['paths'];
  private readonly problems: VerifyProblem[] = [];
  /** Manifests checked (size and decoding), by location: shared by several snapshots, checked once. */
  private readonly checkedManifests = new Set<string>();
  private readonly checkedIndexFiles = new Set<string>();
  /** Data and changelog files to check, in the order they were reached. */
  private readonly work: DataFileWork[] = [];
  private manifestsChecked = 0;

  constructor(
    private readonly table: Table,
    private readonly options: VerifyOptions,
  ) {
    this.io = table.fileIO;
    this.paths = table.paths;
  }

  private report(path: string, snapshotId: number | null, problem: string): void {
    this.problems.push({ path, snapshotId, problem });
  }

  async run(): Promise<VerifySummary> {
    const ids = await this.table.snapshotManager.sortedIds();
    for (const p of snapshotChainProblems(ids, (id) => this.paths.snapshotPath(id))) this.report(p.path, p.snapshotId, p.problem);
    await this.checkHint(this.paths.earliestHint, 'EARLIEST', ids);
    await this.checkHint(this.paths.latestHint, 'LATEST', ids);
    const snapshots = await this.readSnapshots(ids);
    const changelogs = this.options.all ? await this.readLongLivedChangelogs(ids) : [];
    for (const c of changelogs) {
      checkAborted(this.options.signal);
      await this.addChangelogFiles(c);
    }
    for (const snap of snapshots) {
      await this.addChangelogFiles(snap);
      checkAborted(this.options.signal);
      const live = await this.liveDataFiles(snap);
      const locator = new DataFileLocator(this.paths, await this.table.schemaManager.latest());
      for (const e of live.values()) this.work.push({ entry: e, path: locator.dataFile(e), snapshotId: snap.id });
      await this.checkDeletionVectors(snap, live);
    }
    const { filesChecked, rowsChecked } = await this.checkDataFiles();
    return {
      table: this.table.location,
      ok: this.problems.length === 0,
      snapshotsChecked: snapshots.map((s) => s.id),
      changelogsChecked: changelogs.map((c) => c.id),
      manifestsChecked: this.manifestsChecked,
      dataFilesChecked: filesChecked,
      rowsChecked,
      problems: this.problems,
    };
  }

  /** A hint must hold a snapshot id within the snapshots; a missing hint is fine (hints are optional). */
  private async checkHint(path: string, name: string, ids: readonly number[]): Promise<void> {
    let text: string;
    try {
      text = new TextDecoder().decode(await this.io.read(path)).trim();
    } catch {
      return;
    }
    const problem = hintProblem(name, text, ids);
    if (problem !== null) this.report(path, null, problem);
  }

  /** The snapshots to check; with `all` every snapshot file is read, each one that fails reported. */
  private async readSnapshots(ids: readonly number[]): Promise<Snapshot[]> {
    const targets = verifyTargets(ids, this.options);
    const snapshots: Snapshot[] = [];
    const byId = new Set(ids);
    for (const id of this.options.all ? ids : targets) {
      if (!byId.has(id)) {
        this.report(
          this.paths.snapshotPath(id),
          id,
          ids.length === 0
            ? 'the table has no snapshots'
            : `snapshot ${id} does not exist (snapshots are ${ids[0]}..${ids[ids.length - 1]})`,
        );
        continue;
      }
      try {
        const s = await this.table.snapshotManager.snapshot(id);
        if (targets.includes(id)) snapshots.push(s);
      } catch (e) {
        this.report(this.paths.snapshotPath(id), id, `cannot be read: ${message(e)}`);
      }
    }
    return snapshots;
  }

  /** Long-lived changelogs (with `all`): ids contiguous, below the earliest snapshot, decodable. */
  private async readLongLivedChangelogs(ids: readonly number[]): Promise<Snapshot[]> {
    const { io, paths } = this;
    const manager = new ChangelogManager(io, paths);
    const byId = new Set(ids);
    const changelogs: Snapshot[] = [];
    const clIds: number[] = [];
    // Files below EARLIEST are leftovers of an interrupted changelog expiration, not part of the chain.
    const clEarliest = await manager.earliestId();
    for await (const id of manager.listIds()) if (clEarliest === null || id >= clEarliest) clIds.push(id);
    clIds.sort((a, b) => a - b);
    for (let i = 0; i < clIds.length; i++) {
      const id = clIds[i]!;
      if (i > 0 && id !== clIds[i - 1]! + 1) {
        this.report(
          paths.changelogMetaPath(clIds[i - 1]! + 1),
          null,
          `changelog ids jump from ${clIds[i - 1]} to ${id} (missing changelogs)`,
        );
      }
      // Expiration writes changelog-N just before it deletes snapshot-N: only a snapshot still there counts.
      if (byId.has(id) && (await io.exists(paths.snapshotPath(id)))) {
        this.report(paths.changelogMetaPath(id), id, `changelog ${id} is not older than the earliest snapshot ${ids[0]}`);
      }
      try {
        const c = await manager.tryGet(id);
        if (c !== null) changelogs.push(c);
      } catch (e) {
        this.report(paths.changelogMetaPath(id), id, `cannot be read: ${message(e)}`);
      }
    }
    return changelogs;
  }

  /** The changelog files of a snapshot or long-lived changelog join the files to check. */
  private async addChangelogFiles(snap: Snapshot): Promise<void> {
    if (!snap.changelogManifestList) return;
    const { io, paths } = this;
    const listPath = paths.manifestPath(snap.changelogManifestList);
    let metas;
    try {
      metas = await readManifestList(io, listPath);
    } catch (e) {
      this.report(listPath, snap.id, `changelog manifest list cannot be read: ${message(e)}`);
      return;
    }
    const locator = new DataFileLocator(paths, await this.table.schemaManager.latest());
    for (const m of metas) {
      const path = paths.manifestPath(m.fileName);
      try {
        await this.checkManifestSize(path, m, true);
        for await (const e of readManifestEntries(io, path)) {
          if (e.kind === 'ADD') this.work.push({ entry: e, path: locator.dataFile(e), snapshotId: snap.id });
        }
        this.manifestChecked(path);
      } catch (e) {
        this.report(path, snap.id, `changelog manifest cannot be read: ${message(e)}`);
      }
    }
  }

  /**
   * The live data files of a snapshot, by `bucket|partition|file name`, from its base and delta
   * lists; a DELETE of a file no earlier manifest adds is reported.
   */
  private async liveDataFiles(snap: Snapshot): Promise<Map<string, ManifestEntry>> {
    const { io, paths } = this;
    const metas: ManifestFileMeta[] = [];
    for (const list of [snap.baseManifestList, snap.deltaManifestList]) {
      const path = paths.manifestPath(list);
      try {
        metas.push(...(await readManifestList(io, path)));
      } catch (e) {
        this.report(path, snap.id, `manifest list cannot be read: ${message(e)}`);
      }
    }
    const live = new Map<string, ManifestEntry>();
    for (const m of metas) {
      const path = paths.manifestPath(m.fileName);
      const entries: ManifestEntry[] = [];
      try {
        await this.checkManifestSize(path, m, false);
        for await (const e of readManifestEntries(io, path)) entries.push(e);
        this.manifestChecked(path);
      } catch (e) {
        this.report(path, snap.id, `manifest cannot be read: ${message(e)}`);
        continue;
      }
      for (const e of entries) {
        const key = liveKey(e.bucket, e.partition, e.file.fileName);
        if (e.kind === 'ADD') live.set(key, e);
        else if (!live.delete(key)) this.report(path, snap.id, `deletes ${e.file.fileName}, which no earlier manifest adds`);
      }
    }
    return live;
  }

  /** Throws when the manifest is not the size its list records (checked once per manifest, or every time when `always`). */
  private async checkManifestSize(path: string, m: ManifestFileMeta, always: boolean): Promise<void> {
    if (!always && this.checkedManifests.has(path)) return;
    const size = (await this.io.stat(path)).size;
    if (size !== m.fileSize) throw new Error(`the file is ${size} bytes, but the manifest list records ${m.fileSize}`);
  }

  private manifestChecked(path: string): void {
    if (!this.checkedManifests.has(path)) this.manifestsChecked++;
    this.checkedManifests.add(path);
  }

  /**
   * Deletion-vector index files: they exist with their recorded size, every vector decodes (CRC,
   * ranges, cardinality) and belongs to a live data file of its bucket, within its row count.
   */
  private async checkDeletionVectors(snap: Snapshot, live: ReadonlyMap<string, ManifestEntry>): Promise<void> {
    if (!snap.indexManifest) return;
    const indexPath = this.paths.manifestPath(snap.indexManifest);
    let index: IndexManifestEntry[];
    try {
      index = await readIndexManifest(this.io, indexPath);
    } catch (e) {
      this.report(indexPath, snap.id, `index manifest cannot be read: ${message(e)}`);
      return;
    }
    for (const e of index) {
      if (e.indexType !== INDEX_TYPE_DELETION_VECTORS || e.kind !== 'ADD') continue;
      const path = this.paths.indexFilePath(e.fileName, e.externalPath);
      if (this.checkedIndexFiles.has(path)) continue;
      this.checkedIndexFiles.add(path);
      try {
        await this.checkDeletionVectorFile(snap, e, path, live);
      } catch (err) {
        this.report(path, snap.id, `deletion vector index file: ${withoutPath(message(err), path)}`);
      }
    }
  }

  private async checkDeletionVectorFile(
    snap: Snapshot,
    e: IndexManifestEntry,
    path: string,
    live: ReadonlyMap<string, ManifestEntry>,
  ): Promise<void> {
    const size = (await this.io.stat(path)).size;
    if (size !== e.fileSize) throw new Error(`the file is ${size} bytes, but the index manifest records ${e.fileSize}`);
    const vectors = decodeDeletionVectorFile(await this.io.read(path), e.dvRanges ?? [], path);
    for (const [name, dv] of vectors) {
      const data = live.get(liveKey(e.bucket, e.partition, name));
      if (data === undefined) {
        this.report(path, snap.id, `holds a deletion vector of '${name}', which is not a live data file of bucket ${e.bucket}`);
        continue;
      }
      let last = -1;
      for (const p of dv.positions()) last = p;
      if (last >= data.file.rowCount) {
        this.report(path, snap.id, `the deletion vector of '${name}' deletes row ${last}, but the file has ${data.file.rowCount} rows`);
      }
    }
  }

  /** Checks every data file reached once (the first snapshot reaching it names it in a problem). */
  private async checkDataFiles(): Promise<{ filesChecked: number; rowsChecked: number }> {
    const unique = uniqueByPath(this.work);
    let rowsChecked = 0;
    let done = 0;
    for (const w of unique) {
      checkAborted(this.options.signal);
      try {
        rowsChecked += await checkDataFile(this.table, w.entry, w.path, this.options.metadataOnly === true);
      } catch (e) {
        this.report(w.path, w.snapshotId, withoutPath(message(e), w.path));
      }
      this.options.onProgress?.(++done, unique.length);
    }
    return { filesChecked: unique.length, rowsChecked };
  }
}

/** Key of a live data file: the same file name in another bucket or partition is another file. */
function liveKey(bucket: number, partition: Uint8Array, fileName: string): string {
  return `${bucket}|${Buffer.from(partition).toString('hex')}|${fileName}`;
}

/** A message without the `<path>: ` its reader put in front (the problem names the path already). */
function withoutPath(m: string, path: string): string {
  return m.startsWith(path) ? m.slice(path.length + 2) : m;
}

/** The first of each path, in order. */
export function uniqueByPath<T extends { readonly path: string }>(work: readonly T[]): T[] {
  const seen = new Set<string>();
  return work.filter((w) => !seen.has(w.path) && (seen.add(w.path), true));
}

/** Gaps in the snapshot ids (sorted ascending): a problem at the first missing id of each. */
export function snapshotChainProblems(ids: readonly number[], snapshotPath: (id: number) => string): VerifyProblem[] {
  const out: VerifyProblem[] = [];
  for (let i = 1; i < ids.length; i++) {
    if (ids[i] !== ids[i - 1]! + 1) {
      out.push({
        path: snapshotPath(ids[i - 1]! + 1),
        snapshotId: null,
        problem: `snapshot ids jump from ${ids[i - 1]} to ${ids[i]} (missing snapshots)`,
      });
    }
  }
  return out;
}

/** What is wrong with the text of the EARLIEST or LATEST hint, given the snapshot ids (sorted), or null. */
export function hintProblem(name: string, text: string, ids: readonly number[]): string | null {
  const n = Number(text);
  if (!/^\d+$/.test(text)) return `${name} hint is not a snapshot id: '${text.slice(0, 40)}'`;
  if (ids.length > 0 && (n < ids[0]! || n > ids[ids.length - 1]!))
    return `${name} hint says ${n}, but the snapshots are ${ids[0]}..${ids[ids.length - 1]}`;
  if (ids.length === 0) return `${name} hint says ${n}, but the table has no snapshots`;
  return null;
}

/** The snapshots to check: every one (`all`), the one asked for, or the latest. */
export function verifyTargets(ids: readonly number[], options: Pick<VerifyOptions, 'all' | 'snapshotId'>): number[] {
  if (options.all) return [...ids];
  if (options.snapshotId !== undefined) return [options.snapshotId];
  return ids.length > 0 ? [ids[ids.length - 1]!] : [];
}
