/**
 * Orphan file cleanup (Paimon's `remove_orphan_files`, docs/format.md, "Orphan file cleanup"): deletes files under
 * the table directory that no snapshot, tag or in-flight sink commit uses and that are older than
 * a threshold.
 *
 * Safety design:
 * - Only known directories are scanned: `manifest/`, `index/`, `statistics/`, the bucket
 *   directories below exactly as many `key=value` levels as the table has partition keys, and
 *   temporary files in `snapshot/` / `changelog/`. `schema/`, `tag/`, `inflight/`, `consumer/`,
 *   `branch/`, snapshot files and hints, unknown directories and anything outside the table
 *   directory (external data paths) are never touched.
 * - Files of commits in progress are protected by in-flight records (core inflight.ts): table
 *   writers record their data-file name prefix and commits their manifest-name prefixes in
 *   `inflight/` before writing the first such file, and clear the record only after the snapshot
 *   exists; the sink records explicit file lists. A candidate whose path is listed, or whose name
 *   starts with a recorded prefix, is used.
 * - The used set is built before the listing and caught up after the candidates of each delete
 *   batch were listed, right before deleting them: in-flight records first, then snapshots and
 *   tags. A file seen in the listing had its record written before it; if that record is gone at
 *   the catch-up, its writer cleared it after its snapshot landed, which the snapshot listing that
 *   follows sees. So a file that ends up committed is never deleted, whatever `olderThan`.
 * - `inProgressGraceMs` (default 0) can additionally spare every file younger than it, for
 *   writers that do not record in-flight files (older tidemark versions, Java Paimon writers).
 * - Hidden temporary files (`.<name>.<uuid>.tmp`) are deleted only when they are also older than
 *   one hour, whatever the threshold: a younger one may be a write in progress.
 * - Any read error other than "not found" for an object that has disappeared aborts the run
 *   before it deletes anything further. A snapshot whose files are missing while the snapshot
 *   itself still exists is what a concurrent expiration leaves for a while (it deletes manifest
 *   lists and manifests before the snapshot files): the run waits for the snapshot to go (or to
 *   fall below EARLIEST), up to `expiringSnapshotWaitMs`, and carries on with the snapshots that
 *   remain; one that stays stops the run with {@link OrphanCleanupStoppedError}.
 *
 * Memory: the used set holds the names of the files referenced by snapshots and tags (live files
 * plus the history of retained snapshots); candidates are streamed and deleted in batches.
 */
import { NotFoundError, joinPath, type FileIO, type FileStatus } from '@tidemark/storage';
import { escapePathName, readManifestEntries, type Snapshot } from '@tidemark/format';
import {
  INFLIGHT_RECORD_MAX_AGE_MS,
  ChangelogManager,
  SnapshotManager,
  TagManager,
  coreOptions,
  listInflightRecords,
  metadataPaths,
  type TablePaths,
  type InflightRecordFile,
} from '@tidemark/core';
import {
  MaintenanceArgumentError,
  TidemarkUserError,
  checkAborted,
  latestSchema,
  manifestListNames,
  tryReadIndexManifest,
  tryReadManifestList,
  type MaintainedTable,
  type MaintenanceRunOptions,
  type MaintenanceSummary,
} from '@tidemark/core';

/** The file name part of a location. */
function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** Paimon's default threshold: files younger than one day are never orphans. */
export const DEFAULT_ORPHAN_OLDER_THAN_MS = 24 * 3_600_000;
/** Default of {@link RemoveOrphanFilesOptions.inProgressGraceMs}: none, `olderThanMs` is exact. */
export const DEFAULT_IN_PROGRESS_GRACE_MS = 0;
/** Minimum age of hidden temporary files before they may be deleted. */
export const TEMP_FILE_MIN_AGE_MS = 3_600_000;
/** Candidates per delete batch (one S3 DeleteObjects request). */
const BATCH = 1000;
/** Default of {@link RemoveOrphanFilesOptions.expiringSnapshotWaitMs}. */
export const DEFAULT_EXPIRING_SNAPSHOT_WAIT_MS = 60_000;

/**
 * Orphan cleanup stopped, before deleting anything further, because a snapshot or tag still
 * exists while files it references cannot be read: a concurrent `expire-snapshots` that is
 * deleting it (run the cleanup again once it has finished) or a damaged table (`tidemark verify`).
 */
export class OrphanCleanupStoppedError extends TidemarkUserError {}

/** Options of {@link removeOrphanFiles}. */
export interface RemoveOrphanFilesOptions extends MaintenanceRunOptions {
  /**
   * Epoch millis: only files last modified before this are deleted. Default now − 1 day. A time
   * in the future is refused. Files of tidemark writers and commits in progress are protected by
   * their in-flight records whatever this says; never use a recent time while writers that do not
   * record in-flight files (Java Paimon, older tidemark versions) are active.
   */
  readonly olderThanMs?: number;
  /**
   * Files younger than this many millis are never deleted, whatever `olderThanMs` says (default
   * 0: `olderThanMs` is exact). Set it (e.g. 1 hour) when writers that do not record in-flight
   * files may be active: their data files and manifests exist before the snapshot that makes them
   * visible, and a cleanup deleting them in between corrupts that commit.
   */
  readonly inProgressGraceMs?: number;
  /**
   * How long a snapshot whose referenced files are gone may take to disappear itself, as it does
   * when a concurrent expiration is deleting it (default {@link DEFAULT_EXPIRING_SNAPSHOT_WAIT_MS});
   * after that the run stops with {@link OrphanCleanupStoppedError}.
   */
  readonly expiringSnapshotWaitMs?: number;
}

/** Result of {@link removeOrphanFiles}. */
export interface RemoveOrphanFilesSummary extends MaintenanceSummary {
  /** Objects listed under the table directory. */
  readonly filesScanned: number;
  /** Stale in-flight records removed (or that would be, in a dry run); counted in filesDeleted too. */
  readonly inflightRecordsDeleted: number;
}

/** Which snapshot-like files the used set is built from. */
interface MetadataSource {
  readonly paths: TablePaths;
  readonly what: string;
}

/**
 * Deletes files under `table` that nothing uses and that are older than `olderThanMs`.
 *
 * @throws MaintenanceArgumentError when `olderThanMs` is in the future.
 * @throws OrphanCleanupStoppedError when a snapshot or tag that stays references files that cannot be read.
 */
export async function removeOrphanFiles(table: MaintainedTable, options: RemoveOrphanFilesOptions = {}): Promise<RemoveOrphanFilesSummary> {
  const started = Date.now();
  const now = (options.now ?? Date.now)();
  const olderThan = options.olderThanMs ?? now - DEFAULT_ORPHAN_OLDER_THAN_MS;
  if (!Number.isFinite(olderThan)) throw new MaintenanceArgumentError(`olderThanMs must be epoch millis, got ${olderThan}`);
  if (olderThan > now) {
    throw new MaintenanceArgumentError(
      `olderThan ${new Date(olderThan).toISOString()} is in the future; files being written right now would be deleted. Use a time in the past (default: 1 day ago)`,
    );
  }
  const grace = options.inProgressGraceMs ?? DEFAULT_IN_PROGRESS_GRACE_MS;
  if (!Number.isFinite(grace) || grace < 0) throw new MaintenanceArgumentError(`inProgressGraceMs must be >= 0, got ${grace}`);
  const threshold = Math.min(olderThan, now - grace);
  const dryRun = options.dryRun ?? false;
  const listDeleted = dryRun && options.listDeleted !== false;
  const io = table.fileIO;
  const root = table.paths.root;
  const schema = await latestSchema(table);
  const wait = options.expiringSnapshotWaitMs ?? DEFAULT_EXPIRING_SNAPSHOT_WAIT_MS;
  if (!Number.isFinite(wait) || wait < 0) throw new MaintenanceArgumentError(`expiringSnapshotWaitMs must be >= 0, got ${wait}`);
  const used = new UsedFiles(io, table.paths, options.signal, wait);

  let filesScanned = 0;
  let filesDeleted = 0;
  let bytesFreed = 0;
  let inflightRecordsDeleted = 0;
  const deletedList: string[] = [];
  const progress = (phase: string, done: number): void => options.onProgress?.({ phase, done, bytesFreed });

  // Used set first, then the listing; every batch catches up before deleting.
  await used.catchUp();
  progress('used-files', used.size);

  const classifier = new CandidateClassifier(root, schema.partitionKeys, coreOptions(schema).dataFilePathDirectory ?? undefined);
  let batch: FileStatus[] = [];
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    checkAborted(options.signal);
    await used.catchUp();
    const doomed = batch.filter((st) => !used.isUsed(st.path));
    batch = [];
    if (doomed.length === 0) return;
    if (!dryRun) await io.deleteMany(doomed.map((st) => st.path));
    for (const st of doomed) {
      filesDeleted++;
      bytesFreed += st.size;
      if (listDeleted) deletedList.push(st.path);
    }
    progress('deleting', filesDeleted);
  };

  for await (const st of io.list(root, { recursive: true })) {
    filesScanned++;
    if (filesScanned % 1000 === 0) {
      checkAborted(options.signal);
      progress('listing', filesScanned);
    }
    const kind = classifier.classify(st.path);
    if (kind === null) continue;
    const mtime = st.lastModified.getTime();
    if (mtime >= threshold) continue;
    const name = baseName(st.path);
    const isTemp = name.startsWith('.') && name.endsWith('.tmp');
    if (isTemp && mtime >= now - TEMP_FILE_MIN_AGE_MS) continue;
    if (kind === 'metadata-dir' && !isTemp && !isUnknownMetadataFile(name)) continue;
    if (used.isUsed(st.path)) continue;
    batch.push(st);
    if (batch.length >= BATCH) await flush();
  }
  await flush();

  // Stale in-flight records, older than 7 days: prefix records regardless (their writer is
  // certainly gone), files-only records when every file they list is committed or gone.
  await used.catchUp();
  for (const rec of used.inflightRecords) {
    checkAborted(options.signal);
    const age = now - Math.max(rec.record.createdAt, rec.lastModified.getTime());
    if (age < INFLIGHT_RECORD_MAX_AGE_MS) continue;
    let stale = true;
    if (rec.record.prefixes.length === 0) {
      for (const f of rec.record.files) {
        if (used.isCommittedName(baseName(f))) continue;
        if (await io.exists(joinPath(root, f))) {
          stale = false;
          break;
        }
      }
    }
    if (!stale) continue;
    if (!dryRun) await io.delete(rec.path);
    else if (listDeleted) deletedList.push(rec.path);
    inflightRecordsDeleted++;
    filesDeleted++;
  }

  return {
    filesScanned,
    inflightRecordsDeleted,
    filesDeleted,
    bytesFreed,
    durationMs: Date.now() - started,
    dryRun,
    ...(listDeleted ? { deleted: deletedList } : {}),
  };
}

/** Names in `snapshot/` and `changelog/` that are not snapshot files or hints. */
function isUnknownMetadataFile(name: string): boolean {
  if (name === 'EARLIEST' || name === 'LATEST') return false;
  return !/^(snapshot|changelog)-\d+$/.test(name);
}

type CandidateKind = 'manifest' | 'index' | 'statistics' | 'data' | 'metadata-dir';

/** Decides from its location whether a listed object may be an orphan at all. */
class CandidateClassifier {
  private readonly rootPrefix: string;
  private readonly keyPrefixes: readonly string[];
  private readonly dataDir: readonly string[];

  constructor(root: string, partitionKeys: readonly string[], dataFilePathDirectory: string | undefined) {
    this.rootPrefix = root.endsWith('/') ? root : `${root}/`;
    this.keyPrefixes = partitionKeys.map((k) => `${escapePathName(k)}=`);
    this.dataDir = (dataFilePathDirectory ?? '').split('/').filter((s) => s !== '');
  }

  classify(path: string): CandidateKind | null {
    if (!path.startsWith(this.rootPrefix)) return null; // outside the table: never
    const parts = path.slice(this.rootPrefix.length).split('/');
    if (parts.some((p) => p === '' || p === '.' || p === '..')) return null;
    const top = parts[0]!;
    if (parts.length === 2) {
      if (top === 'manifest') return 'manifest';
      if (top === 'index') return 'index';
      if (top === 'statistics') return 'statistics';
      if (top === 'snapshot' || top === 'changelog') return 'metadata-dir';
    }
    // <data dir>/<k1=…>/…/<kn=…>/bucket-<b>/<file>
    const d = this.dataDir.length;
    const p = this.keyPrefixes.length;
    if (parts.length !== d + p + 2) return null;
    for (let i = 0; i < d; i++) if (parts[i] !== this.dataDir[i]) return null;
    for (let i = 0; i < p; i++) if (!parts[d + i]!.startsWith(this.keyPrefixes[i]!)) return null;
    if (!/^bucket-[^/]+$/.test(parts[d + p]!)) return null;
    return 'data';
  }
}

/**
 * The used-file set over all snapshots and tags of the table and its branches, plus in-flight
 * records. Grows monotonically; {@link catchUp} adds what appeared since the last call.
 */
class UsedFiles {
  /** Names of every file referenced (Paimon matches by name). */
  private readonly names = new Set<string>();
  /** Names of data/metadata files referenced by snapshots and tags only (not in-flight). */
  private readonly committed = new Set<string>();
  /** Manifest files already read (each is read once). */
  private readonly readManifests = new Set<string>();
  /** Per metadata source: ids of snapshots already processed. */
  private readonly seenSnapshots = new Map<string, Set<number>>();
  private readonly seenTags = new Set<string>();
  /** Per metadata source: ids of long-lived changelogs already processed. */
  private readonly seenChangelogs = new Map<string, Set<number>>();
  /** In-flight relative paths and names. */
  private readonly inflightPaths = new Set<string>();
  /** In-flight file-name prefixes, and their distinct lengths (a lookup per length, not per prefix). */
  private readonly inflightPrefixes = new Set<string>();
  private inflightPrefixLengths: number[] = [];
  inflightRecords: InflightRecordFile[] = [];

  constructor(
    private readonly io: FileIO,
    private readonly paths: TablePaths,
    private readonly signal: AbortSignal | undefined,
    /** How long a snapshot with missing files may take to disappear (see the module doc). */
    private readonly expiringWaitMs: number,
  ) {}

  get size(): number {
    return this.names.size;
  }

  isUsed(path: string): boolean {
    const name = baseName(path);
    if (this.names.has(name)) return true;
    for (const n of this.inflightPrefixLengths) if (name.length >= n && this.inflightPrefixes.has(name.slice(0, n))) return true;
    const rel = path.startsWith(`${this.paths.root}/`) ? path.slice(this.paths.root.length + 1) : path;
    return this.inflightPaths.has(rel);
  }

  isCommittedName(name: string): boolean {
    return this.committed.has(name);
  }

  /** Reads in-flight records, then new tags and snapshots (in that order: see the module doc). */
  async catchUp(): Promise<void> {
    const records: InflightRecordFile[] = [];
    for await (const rec of listInflightRecords(this.io, this.paths.root)) {
      records.push(rec);
      for (const f of rec.record.files) {
        this.inflightPaths.add(f);
        this.names.add(baseName(f));
      }
      for (const p of rec.record.prefixes) this.inflightPrefixes.add(p);
    }
    this.inflightPrefixLengths = [...new Set([...this.inflightPrefixes].map((p) => p.length))];
    this.inflightRecords = records;
    for (const source of await this.sources()) {
      checkAborted(this.signal);
      await this.catchUpSource(source);
    }
  }

  /** The main branch and every branch under `branch/branch-<name>/`. */
  private async sources(): Promise<MetadataSource[]> {
    const out: MetadataSource[] = [{ paths: this.paths, what: 'main' }];
    const branches = new Set<string>();
    for await (const st of this.io.list(joinPath(this.paths.root, 'branch'), { recursive: true })) {
      const rel = st.path.slice(joinPath(this.paths.root, 'branch').length + 1);
      const first = rel.split('/')[0]!;
      if (first.startsWith('branch-') && first.length > 'branch-'.length) branches.add(first.slice('branch-'.length));
    }
    for (const b of branches) out.push({ paths: metadataPaths(this.paths.root, b), what: `branch '${b}'` });
    return out;
  }

  private async catchUpSource(source: MetadataSource): Promise<void> {
    let seen = this.seenSnapshots.get(source.what);
    if (seen === undefined) this.seenSnapshots.set(source.what, (seen = new Set()));
    const snapshots = new SnapshotManager(this.io, source.paths);
    // Snapshot files below EARLIEST are leftovers of an expiration killed mid-batch: what they
    // referenced is gone, and whatever of it still exists is used by the chain.
    const earliest = await snapshots.earliestId();
    for await (const id of snapshots.listIds()) {
      if (seen.has(id) || (earliest !== null && id < earliest)) continue;
      checkAborted(this.signal);
      const s = await snapshots.tryGet(id);
      if (s === null) continue; // expired meanwhile
      // Expiration moves EARLIEST past a batch before deleting its snapshot files.
      const live = async (): Promise<boolean> =>
        (await this.io.exists(source.paths.snapshotPath(id))) && ((await snapshots.earliestId()) ?? id) <= id;
      await this.addSnapshot(s, `snapshot ${id} of ${source.what}`, live);
      seen.add(id);
    }
    // After the snapshots: expiration writes changelog-<id> before it deletes snapshot-<id>, so
    // a snapshot that vanished above is found here.
    let seenChangelogs = this.seenChangelogs.get(source.what);
    if (seenChangelogs === undefined) this.seenChangelogs.set(source.what, (seenChangelogs = new Set()));
    const changelogs = new ChangelogManager(this.io, source.paths);
    // Changelog files below EARLIEST are leftovers too (changelog expiration also deletes in batches).
    const earliestChangelog = await changelogs.earliestId();
    for await (const id of changelogs.listIds()) {
      if (seenChangelogs.has(id) || (earliestChangelog !== null && id < earliestChangelog)) continue;
      checkAborted(this.signal);
      const c = await changelogs.tryGet(id);
      if (c === null) continue; // expired meanwhile
      // Only its changelog is read from a long-lived changelog; its other lists went with its snapshot.
      await this.addChangelog(c, `changelog ${id} of ${source.what}`, () => this.io.exists(source.paths.changelogMetaPath(id)));
      seenChangelogs.add(id);
    }
    const tags = new TagManager(this.io, source.paths);
    for await (const name of tags.listNames()) {
      const key = `${source.what}\u0000${name}`;
      if (this.seenTags.has(key)) continue;
      const tag = await tags.tryGet(name);
      if (tag === null) continue;
      await this.addSnapshot(tag, `tag '${name}' of ${source.what}`, () => tags.exists(name));
      this.seenTags.add(key);
    }
  }

  /** Whether `stillExists` turns false within `expiringWaitMs` (polled with a growing pause). */
  private async disappears(stillExists: () => Promise<boolean>): Promise<boolean> {
    const deadline = Date.now() + this.expiringWaitMs;
    for (let pause = 25; ; pause = Math.min(pause * 2, 1000)) {
      if (!(await stillExists())) return true;
      const left = deadline - Date.now();
      if (left <= 0) return false;
      checkAborted(this.signal);
      await new Promise((resolve) => setTimeout(resolve, Math.min(pause, left)));
    }
  }

  private use(name: string): void {
    this.names.add(name);
    this.committed.add(name);
  }

  /**
   * Adds what a long-lived changelog references: its changelog manifest list, manifests and
   * files, and (when they still exist, e.g. kept by a tag) its other manifest lists.
   */
  private async addChangelog(c: Snapshot, what: string, stillExists: () => Promise<boolean>): Promise<void> {
    // Its base and delta lists normally went with its snapshot: they count only while they exist.
    const existing = async (name: string): Promise<string> => (name && (await this.io.exists(this.paths.manifestPath(name))) ? name : '');
    const [base, delta] = await Promise.all([existing(c.baseManifestList), existing(c.deltaManifestList)]);
    await this.addSnapshot({ ...c, baseManifestList: base, deltaManifestList: delta }, what, stillExists);
  }

  /**
   * Adds everything `s` references. A missing file is fine when `s` itself disappears (expired
   * meanwhile: expiration deletes a snapshot's files before the snapshot, so it is given
   * `expiringWaitMs` to go); otherwise the run stops rather than guess.
   */
  private async addSnapshot(s: Snapshot, what: string, stillExists: () => Promise<boolean>): Promise<void> {
    const gone = async (name: string): Promise<boolean> => {
      if (await this.disappears(stillExists)) return true;
      throw new OrphanCleanupStoppedError(
        `${what} of ${this.paths.root} references '${name}', which cannot be read, and the snapshot is still there: ` +
          'either a concurrent expire-snapshots is deleting it (run remove-orphan-files again once it has finished) ' +
          "or the table is damaged (run 'tidemark verify'); orphan cleanup stopped before deleting anything it cannot account for",
      );
    };
    if (s.statistics) this.use(s.statistics);
    for (const listName of manifestListNames(s)) {
      this.use(listName);
      const list = await tryReadManifestList(this.io, this.paths, listName);
      if (list === null) {
        if (await gone(listName)) return;
        continue;
      }
      for (const m of list) {
        this.use(m.fileName);
        if (this.readManifests.has(m.fileName)) continue;
        try {
          for await (const e of readManifestEntries(this.io, this.paths.manifestPath(m.fileName))) {
            this.use(e.file.fileName);
            for (const x of e.file.extraFiles) this.use(x);
          }
        } catch (err) {
          if (!(err instanceof NotFoundError)) throw err;
          if (await gone(m.fileName)) return;
        }
        this.readManifests.add(m.fileName);
      }
    }
    if (s.indexManifest) {
      this.use(s.indexManifest);
      const index = await tryReadIndexManifest(this.io, this.paths, s.indexManifest);
      if (index === null) {
        if (await gone(s.indexManifest)) return;
      } else {
        for (const e of index) this.use(e.fileName);
      }
    }
  }
}
