/**
 * Before a commit builds on the latest snapshot, checks that what it builds on is intact: a commit
 * on top of an unreadable manifest, or next to a missing or truncated data file, would print
 * "committed" while every reader of the new snapshot fails.
 *
 * Checked: both manifest lists of the base snapshot decode; every manifest they list has the size
 * the list records and decodes; every live data file in the (partition, bucket)s the commit
 * touches exists with the size its manifest entry records (when enabled), less the files the commit
 * deletes (they are not live in the snapshot it makes). Data files elsewhere are not checked
 * (that would cost a request per file of the table per commit; `tidemark verify` checks them all).
 * What passed is remembered per instance: files are immutable, so later commits of a long-lived
 * writer only check what is new.
 */
import type { FileIO } from '@tidemark/storage';
import { fileEntryIdentity, type ManifestEntry, type ManifestFileMeta, type Snapshot } from '@tidemark/format';
import { CorruptTableError } from '../scan/errors.js';
import type { TablePaths } from '../table-paths.js';
import { dataManifests, EntryFolder, partitionKey } from './manifest-fold.js';
import { MetadataCache } from './metadata-cache.js';

/** Parallel manifest reads. */
const MANIFEST_CONCURRENCY = 8;
/** Parallel `stat`s of data files. */
const STAT_CONCURRENCY = 16;
/**
 * Most files {@link BaseCheckMemory} keeps pending. Past it, the buckets holding them are forgotten
 * as checked (their next commit folds every manifest again): memory stays bounded when other
 * writers add files to buckets this process stopped writing to.
 */
const MAX_PENDING_FILES = 100_000;
/** Most files {@link BaseCheckMemory} remembers as committed by this process (past it, it forgets them all). */
const MAX_COMMITTED_FILES = 100_000;

/** A data file as a manifest entry records it: where, and how big. */
interface RecordedFile {
  readonly path: string;
  readonly size: number;
  /** The manifest that added it (a pending file is checked once a base lists that manifest). */
  readonly manifest: string;
}

/**
 * What checks passed (immutable files, so a pass stays a pass): kept per committer, or shared by
 * the committers of one table (see `CommitKnowledge`).
 *
 * The invariant that lets a commit skip the manifests it has seen: for a bucket in
 * `checkedBuckets`, every file a good manifest adds is good, pending, or deleted by a later good
 * manifest. A commit reading a fresh manifest keeps the new files of checked buckets it does not
 * touch as pending, for the commit that next touches them.
 */
export class BaseCheckMemory {
  readonly goodManifests = new Set<string>();
  readonly goodFiles = new Set<string>();
  /** Buckets whose live files were all checked once (later checks fold only new manifests). */
  readonly checkedBuckets = new Set<string>();
  /** Added files not stat'ed yet, by bucket, then file identity (a DELETE entry names the same identity). */
  private readonly pending = new Map<string, Map<string, RecordedFile>>();
  private pendingFiles = 0;
  /** Buckets that running checks fold for the first time, with how many checks do. */
  private readonly firstFolds = new Map<string, number>();
  /** Newest base snapshot id a check started on. */
  private newestBase = -1;
  /** Bumped when pending files are dropped to stay within {@link MAX_PENDING_FILES}. */
  private drops = 0;
  /** Files that snapshots of this process's committers added (not necessarily stat'ed). */
  private readonly committedFiles = new Set<string>();

  /**
   * Files a committer sharing this memory committed: not kept pending for a commit that touches
   * their bucket later. Their writer uploaded them with the sizes their entries record, and a
   * `stat` of each would cost a small-append loop a request per file written; the next commit to
   * the same bucket still stats them with the rest of the manifest it reads fresh.
   */
  committed(paths: Iterable<string>): void {
    for (const p of paths) {
      if (this.committedFiles.size >= MAX_COMMITTED_FILES) this.committedFiles.clear();
      this.committedFiles.add(p);
    }
  }

  /** Whether a fresh manifest's entries of `bucket` must be kept by a check that does not touch it. */
  keeps(bucket: string): boolean {
    return this.checkedBuckets.has(bucket) || this.firstFolds.has(bucket);
  }

  /** A check of base snapshot `baseId` starts folding `buckets` for the first time. */
  begin(baseId: number, buckets: ReadonlySet<string>): { readonly baseId: number; readonly drops: number } {
    this.newestBase = Math.max(this.newestBase, baseId);
    for (const k of buckets) this.firstFolds.set(k, (this.firstFolds.get(k) ?? 0) + 1);
    return { baseId, drops: this.drops };
  }

  /**
   * The check `started` by {@link begin} ends; when it `passed`, its first-time buckets become
   * checked. Not when a check started on a newer base meanwhile, or pending files were dropped: a
   * manifest this check did not read may then have been marked good without keeping their files.
   */
  end(
    started: { readonly baseId: number; readonly drops: number },
    buckets: ReadonlySet<string>,
    passed: boolean,
    unchecked: ReadonlySet<string> = new Set(),
  ): void {
    for (const k of buckets) {
      const n = this.firstFolds.get(k)! - 1;
      if (n === 0) this.firstFolds.delete(k);
      else this.firstFolds.set(k, n);
    }
    if (!passed || started.baseId < this.newestBase || started.drops !== this.drops) return;
    for (const k of buckets) if (!unchecked.has(k)) this.checkedBuckets.add(k);
  }

  /**
   * A check left `path` of `bucket` unchecked because its commit deletes it: no longer pending,
   * and the bucket is folded afresh by the next check that touches it (which finds the file gone
   * if the commit landed, or checks it if it did not).
   */
  skipped(path: string, bucket: string): void {
    this.checkedBuckets.delete(bucket);
    this.unpend(path, bucket);
  }

  /**
   * Applies a fresh manifest's folded entries of `bucket`: an ADD is pending, a DELETE cancels it.
   * `touched`: the reading commit checks the bucket now (a file it refuses stays pending).
   */
  record(bucket: string, identity: string, added: RecordedFile | null, touched: boolean): void {
    let files = this.pending.get(bucket);
    if (added === null) {
      if (files?.delete(identity) === true) {
        this.pendingFiles--;
        if (files.size === 0) this.pending.delete(bucket);
      }
      return;
    }
    if (this.goodFiles.has(added.path) || (!touched && this.committedFiles.has(added.path))) return;
    if (files === undefined) this.pending.set(bucket, (files = new Map()));
    if (!files.has(identity)) this.pendingFiles++;
    files.set(identity, added);
    if (this.pendingFiles > MAX_PENDING_FILES) this.dropPending();
  }

  /** Pending files of `bucket` whose manifest is one of `listed` (a base that adds them). */
  pendingOf(bucket: string, listed: ReadonlySet<string>): RecordedFile[] {
    const files = this.pending.get(bucket);
    if (files === undefined) return [];
    return [...files.values()].filter((f) => listed.has(f.manifest) && !this.goodFiles.has(f.path));
  }

  /** `path` exists with its recorded size: it is no longer pending. */
  passed(path: string, bucket: string): void {
    this.goodFiles.add(path);
    this.unpend(path, bucket);
  }

  /** `path` of `bucket` is no longer pending (under any manifest that added it). */
  private unpend(path: string, bucket: string): void {
    const files = this.pending.get(bucket);
    if (files === undefined) return;
    for (const [id, f] of files) {
      if (f.path !== path) continue;
      files.delete(id);
      this.pendingFiles--;
    }
    if (files.size === 0) this.pending.delete(bucket);
  }

  private dropPending(): void {
    this.drops++;
    for (const [k, files] of this.pending) {
      if (this.pendingFiles <= MAX_PENDING_FILES / 2) break;
      this.pending.delete(k);
      this.pendingFiles -= files.size;
      this.checkedBuckets.delete(k);
    }
  }
}

export class CommitBaseCheck {
  private readonly goodManifests: Set<string>;

  constructor(
    private readonly fileIO: FileIO,
    private readonly paths: TablePaths,
    /** Location of a data file of a manifest entry; null to check manifests only. */
    private readonly locate: ((entry: ManifestEntry) => string) | null,
    /**
     * The committer's cache: manifest lists and manifests it holds (written or read and decoded by
     * this process, with their file sizes) are checked without a request.
     */
    private readonly cache: MetadataCache = new MetadataCache(fileIO, paths),
    private readonly memory: BaseCheckMemory = new BaseCheckMemory(),
  ) {
    this.goodManifests = memory.goodManifests;
  }

  /** A snapshot this committer created added `entries`' files (see {@link BaseCheckMemory.committed}). */
  committed(entries: readonly ManifestEntry[]): void {
    const locate = this.locate;
    if (locate === null) return;
    this.memory.committed(entries.filter((e) => e.kind === 'ADD').map(locate));
  }

  /** @throws CorruptTableError naming the unreadable manifest list, manifest or data file. */
  async check(latest: Snapshot, delta: readonly ManifestEntry[]): Promise<void> {
    const refuse = (what: string, cause: unknown): never => {
      const detail = cause instanceof Error ? cause.message : String(cause);
      throw new CorruptTableError(
        `refusing to commit on top of snapshot ${latest.id} of ${this.paths.root}: ${what} (${detail}); nothing was committed. ` +
          `Run 'tidemark verify' to see what is damaged, and repair it (e.g. roll back to an intact snapshot) before writing`,
        // Actionable and nothing changed: reported as one line, unlike corruption met while reading.
        { cause, userError: true },
      );
    };
    let metas;
    try {
      metas = await dataManifests(this.fileIO, this.paths, latest, this.cache);
    } catch (e) {
      return refuse('its manifest list cannot be read', e);
    }
    const locate = this.locate;
    const memory = this.memory;
    const touched = new Set(locate === null ? [] : delta.map((e) => `${partitionKey(e.partition)}|${e.bucket}`));
    // Manifests are immutable: each is checked once per committer, so a retry after a lost race
    // reads only the manifests the winners added, not the whole table again. A bucket's data files
    // are folded over every manifest the first time a commit touches it; afterwards the files of
    // new manifests are enough, kept pending by whichever commit read those manifests first.
    const fresh = metas.filter((m) => !this.goodManifests.has(m.fileName));
    const firstTime = new Set([...touched].filter((k) => !memory.checkedBuckets.has(k)));
    // Files the commit deletes are not live in the snapshot it makes: a compaction does not stat
    // its inputs (a request per input file on an object store).
    const deleting = new Set(locate === null ? [] : delta.filter((e) => e.kind === 'DELETE').map(locate));
    const unchecked = new Set<string>();
    const started = memory.begin(latest.id, firstTime);
    let passed = false;
    try {
      await this.checkFiles(metas, fresh, touched, firstTime, refuse, deleting, unchecked);
      passed = true;
    } finally {
      memory.end(started, firstTime, passed, unchecked);
    }
  }

  private async checkFiles(
    metas: readonly ManifestFileMeta[],
    fresh: readonly ManifestFileMeta[],
    touched: ReadonlySet<string>,
    firstTime: ReadonlySet<string>,
    refuse: (what: string, cause: unknown) => never,
    deleting: ReadonlySet<string>,
    unchecked: Set<string>,
  ): Promise<void> {
    const memory = this.memory;
    const toRead = firstTime.size > 0 ? metas : fresh;
    /** Per manifest read: entries of the first-time buckets (every manifest), and fresh entries to keep. */
    const firstFold: ManifestEntry[][] = toRead.map(() => []);
    const kept: ManifestEntry[][] = toRead.map(() => []);
    let nextManifest = 0;
    const readOne = async (): Promise<void> => {
      while (nextManifest < toRead.length) {
        const i = nextManifest++;
        const m = toRead[i]!;
        const isFresh = !this.goodManifests.has(m.fileName);
        const path = this.paths.manifestPath(m.fileName);
        try {
          if (!isFresh && firstTime.size === 0) continue;
          let entries: AsyncIterable<ManifestEntry> | Iterable<ManifestEntry>;
          const cached = this.cache.cached(m.fileName);
          if (cached !== undefined && cached.size === m.fileSize) {
            entries = cached.entries;
          } else if (isFresh) {
            // One GET both checks the size and decodes (no separate stat).
            const bytes = await this.fileIO.read(path);
            if (bytes.length !== m.fileSize)
              throw new Error(`the file is ${bytes.length} bytes, but the manifest list records ${m.fileSize}`);
            entries = this.cache.decode(m.fileName, bytes);
          } else {
            entries = this.cache.entries(m.fileName);
          }
          if (this.locate === null) {
            // Manifests only: decoding is the check.
            for await (const e of entries) void e;
            continue;
          }
          for await (const e of entries) {
            const k = `${partitionKey(e.partition)}|${e.bucket}`;
            if (firstTime.has(k)) firstFold[i]!.push(e);
            if (isFresh && (touched.has(k) || memory.keeps(k))) kept[i]!.push(e);
          }
        } catch (e) {
          return refuse(`manifest ${path} cannot be read`, e);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(MANIFEST_CONCURRENCY, toRead.length) }, readOne));
    const locate = this.locate;
    if (locate !== null) {
      // Before the manifests are marked good (synchronously with it): a concurrent check that sees
      // them good finds their new files pending.
      for (const [identity, { entry: e, manifest }] of foldKept(kept, toRead)) {
        const k = `${partitionKey(e.partition)}|${e.bucket}`;
        memory.record(k, identity, e.kind === 'ADD' ? { path: locate(e), size: e.file.fileSize, manifest } : null, touched.has(k));
      }
    }
    for (const m of fresh) this.goodManifests.add(m.fileName);
    if (locate === null) return;
    const listed = new Set(metas.map((m) => m.fileName));
    const todo = new Map<string, { path: string; size: number; bucket: string }>();
    for (const k of touched) for (const f of memory.pendingOf(k, listed)) todo.set(f.path, { ...f, bucket: k });
    const firstFolder = new EntryFolder();
    for (const entries of firstFold) for (const e of entries) firstFolder.add(e);
    for (const e of firstFolder.entries.values()) {
      if (e.kind !== 'ADD') continue;
      const path = locate(e);
      if (!memory.goodFiles.has(path)) todo.set(path, { path, size: e.file.fileSize, bucket: `${partitionKey(e.partition)}|${e.bucket}` });
    }
    for (const f of todo.values()) {
      if (!deleting.has(f.path)) continue;
      todo.delete(f.path);
      memory.skipped(f.path, f.bucket);
      unchecked.add(f.bucket);
    }
    const files = [...todo.values()];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < files.length) {
        const f = files[next++]!;
        let size: number;
        try {
          size = (await this.fileIO.stat(f.path)).size;
        } catch (e) {
          return refuse(`live data file ${f.path} cannot be found`, e);
        }
        if (size !== f.size) refuse(`live data file ${f.path} is damaged`, `it is ${size} bytes, but its manifest entry records ${f.size}`);
        memory.passed(f.path, f.bucket);
      }
    };
    await Promise.all(Array.from({ length: Math.min(STAT_CONCURRENCY, files.length) }, worker));
  }
}

/**
 * Folds the kept entries of fresh manifests in list order: an ADD with its later DELETE cancel
 * out; an ADD left is new, with the manifest that adds it; a DELETE left removes an older file.
 */
function foldKept(
  kept: readonly ManifestEntry[][],
  manifests: readonly ManifestFileMeta[],
): Map<string, { entry: ManifestEntry; manifest: string }> {
  const out = new Map<string, { entry: ManifestEntry; manifest: string }>();
  kept.forEach((entries, i) => {
    for (const entry of entries) {
      const id = fileEntryIdentity(entry);
      if (entry.kind === 'DELETE' && out.get(id)?.entry.kind === 'ADD') out.delete(id);
      else out.set(id, { entry, manifest: manifests[i]!.fileName });
    }
  });
  return out;
}
