/**
 * Before a commit builds on the latest snapshot, checks that what it builds on is intact: a commit
 * on top of an unreadable manifest, or next to a missing or truncated data file, would print
 * "committed" while every reader of the new snapshot fails.
 *
 * Checked: both manifest lists of the base snapshot decode; every manifest they list has the size
 * the list records and decodes; every live data file in the (partition, bucket)s the commit
 * touches exists with the size its manifest entry records (when enabled). Data files elsewhere are not checked
 * (that would cost a request per file of the table per commit; `tidemark verify` checks them all).
 * What passed is remembered per instance: files are immutable, so later commits of a long-lived
 * writer only check what is new.
 */
import type { FileIO } from '@tidemark/storage';
import type { ManifestEntry, Snapshot } from '@tidemark/format';
import { CorruptTableError } from '../scan/errors.js';
import type { TablePaths } from '../table-paths.js';
import { dataManifests, EntryFolder, partitionKey } from './manifest-fold.js';
import { MetadataCache } from './metadata-cache.js';

/** Parallel manifest reads. */
const MANIFEST_CONCURRENCY = 8;
/** Parallel `stat`s of data files. */
const STAT_CONCURRENCY = 16;

/**
 * What checks passed (immutable files, so a pass stays a pass): kept per committer, or shared by
 * the committers of one table (see `CommitKnowledge`).
 */
export class BaseCheckMemory {
  readonly goodManifests = new Set<string>();
  readonly goodFiles = new Set<string>();
  /** Buckets whose live files were all checked once (later checks fold only new manifests). */
  readonly checkedBuckets = new Set<string>();
}

export class CommitBaseCheck {
  private readonly goodManifests: Set<string>;
  private readonly goodFiles: Set<string>;
  private readonly checkedBuckets: Set<string>;

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
    memory: BaseCheckMemory = new BaseCheckMemory(),
  ) {
    this.goodManifests = memory.goodManifests;
    this.goodFiles = memory.goodFiles;
    this.checkedBuckets = memory.checkedBuckets;
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
    const touched = new Set(locate === null ? [] : delta.map((e) => `${partitionKey(e.partition)}|${e.bucket}`));
    // Manifests are immutable: each is checked once per committer, so a retry after a lost race
    // reads only the manifests the winners added, not the whole table again. A bucket's data files
    // are folded over every manifest the first time a commit touches it, and over the new manifests
    // only afterwards (the files of manifests read before were stat'ed then).
    const fresh = metas.filter((m) => !this.goodManifests.has(m.fileName));
    const firstTime = new Set([...touched].filter((k) => !this.checkedBuckets.has(k)));
    const toRead = firstTime.size > 0 ? metas : fresh;
    const perManifest: ManifestEntry[][] = toRead.map(() => []);
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
          for await (const e of entries) {
            const k = `${partitionKey(e.partition)}|${e.bucket}`;
            if (isFresh ? touched.has(k) : firstTime.has(k)) perManifest[i]!.push(e);
          }
        } catch (e) {
          return refuse(`manifest ${path} cannot be read`, e);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(MANIFEST_CONCURRENCY, toRead.length) }, readOne));
    for (const m of fresh) this.goodManifests.add(m.fileName);
    const folder = new EntryFolder();
    for (const entries of perManifest) for (const e of entries) folder.add(e);
    if (locate === null) return;
    const todo = [...folder.entries.values()]
      .filter((e) => e.kind === 'ADD')
      .map((e) => ({ path: locate(e), size: e.file.fileSize }))
      .filter((f) => !this.goodFiles.has(f.path));
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < todo.length) {
        const f = todo[next++]!;
        let size: number;
        try {
          size = (await this.fileIO.stat(f.path)).size;
        } catch (e) {
          return refuse(`live data file ${f.path} cannot be found`, e);
        }
        if (size !== f.size) refuse(`live data file ${f.path} is damaged`, `it is ${size} bytes, but its manifest entry records ${f.size}`);
        this.goodFiles.add(f.path);
      }
    };
    await Promise.all(Array.from({ length: Math.min(STAT_CONCURRENCY, todo.length) }, worker));
    for (const k of touched) this.checkedBuckets.add(k);
  }
}
