/**
 * What the other branches of a table still use, for a job on one branch that deletes files
 * (snapshot expiration, rollback). Branches share the table's data files, manifests and index
 * files: a branch made from a tag starts with copies of the tag's snapshot, whose manifests and
 * data files are the parent's, and a fast-forward copies a branch's snapshots into the target.
 *
 * Java Paimon's expiration and rollback look at their own branch only and count on the tag a
 * branch was made from staying on both sides. Here every other branch is checked, so that deleting
 * that tag (on either side) or expiring a branch past its fork never deletes a file another
 * branch still reads. What another branch `Y` can still need of the files a job on branch `X`
 * would delete, when the job looks at `X`'s snapshots up to id `upTo`:
 *
 * - everything live in `Y`'s earliest snapshot and in each of `Y`'s tags;
 * - everything `Y`'s snapshots from its earliest up to `upTo` reference directly: their manifest
 *   lists, the manifests of their base, delta and changelog lists, their index manifests and index
 *   files, and the data and changelog files their delta and changelog manifests add;
 * - the changelog manifest lists, manifests and files of `Y`'s long-lived changelogs
 *   (`changelog/changelog-<id>`) up to `upTo`: a changelog kept from a snapshot both branches had
 *   names the same files.
 *
 * That covers every file shared with `Y`: shared files came through a snapshot both branches have
 * under the same id, so a file `Y` still uses is either live at `Y`'s earliest snapshot or added
 * by one of `Y`'s snapshots no later than the newest snapshot of `X` the job looks at. Only the
 * job's candidates are tested against data files, so memory stays bounded by the candidates and
 * the metadata names.
 */
import { NotFoundError, type FileIO } from '@tidemark/storage';
import { readManifestEntries, type ManifestFileMeta, type Snapshot } from '@tidemark/format';
import { ChangelogManager } from '../changelog-manager.js';
import { SnapshotManager } from '../snapshot-manager.js';
import { TagManager } from '../tag-manager.js';
import { MAIN_BRANCH, type TablePaths } from '../table-paths.js';
import { metadataPaths } from '../path-factory.js';
import { MaintenanceError } from '../expire/maintenance-errors.js';
import { checkAborted, manifestListNames, tryReadIndexManifest, tryReadManifestList, type DataFileLocator } from '../expire/table-files.js';
import { METADATA_READ_CONCURRENCY, idRange, mapOrdered } from '../expire/bounded-map.js';
import { BranchManager } from './branch-manager.js';

/** What one other branch references (see the module documentation). */
interface BranchUse {
  readonly branch: string;
  /** Earliest snapshot and tags: their whole live set counts. */
  readonly wholes: ReadonlyArray<{ readonly s: Snapshot; readonly what: string }>;
  /** Snapshots after the earliest, up to the job's bound: what they add counts. */
  readonly adders: readonly Snapshot[];
  /** Long-lived changelogs up to the job's bound: their changelog list counts. */
  readonly changelogs: readonly Snapshot[];
}

/**
 * The branches other than `paths.branch` and what of them a job on `paths.branch` up to snapshot
 * `upTo` must keep. Read once per job, before it deletes anything.
 */
export class OtherBranches {
  private constructor(
    private readonly io: FileIO,
    private readonly paths: TablePaths,
    private readonly uses: readonly BranchUse[],
  ) {}

  /** Names of the other branches (main included when the job is on a branch). */
  get branches(): string[] {
    return this.uses.map((u) => u.branch);
  }

  /**
   * Reads the snapshots and tags of every other branch that a job on `paths.branch` looking at
   * snapshots up to `upTo` must respect; null when the table has no other branch (one listing).
   */
  static async read(io: FileIO, paths: TablePaths, upTo: number, signal?: AbortSignal): Promise<OtherBranches | null> {
    const names = (await new BranchManager(io, paths.root).names()).filter((b) => b !== paths.branch);
    if (paths.branch !== MAIN_BRANCH) names.unshift(MAIN_BRANCH);
    if (names.length === 0) return null;
    const uses: BranchUse[] = [];
    for (const branch of names) {
      checkAborted(signal);
      const p = metadataPaths(paths.root, branch);
      const snapshots = new SnapshotManager(io, p);
      const [earliest, latest, tags] = await Promise.all([snapshots.earliestId(), snapshots.latestId(), new TagManager(io, p).list()]);
      const wholes: Array<{ s: Snapshot; what: string }> = tags.map(({ name, tag }) => ({
        s: tag,
        what: `tag '${name}' of branch '${branch}'`,
      }));
      const adders: Snapshot[] = [];
      if (earliest !== null && latest !== null) {
        for await (const s of mapOrdered(idRange(earliest, Math.min(latest, upTo) + 1), METADATA_READ_CONCURRENCY, (id) =>
          snapshots.tryGet(id),
        )) {
          if (s === null) continue; // expired meanwhile: the next earliest covers it
          if (s.id === earliest) wholes.push({ s, what: `snapshot ${s.id} of branch '${branch}'` });
          else adders.push(s);
        }
        // The earliest counts even when beyond the bound: what it has live may be shared.
        if (earliest > upTo) {
          const s = await snapshots.tryGet(earliest);
          if (s !== null) wholes.push({ s, what: `snapshot ${earliest} of branch '${branch}'` });
        }
      }
      const changelogManager = new ChangelogManager(io, p);
      // Files below EARLIEST are leftovers of an interrupted changelog expiration: their files went first.
      const changelogEarliest = (await changelogManager.earliestId()) ?? Number.MAX_SAFE_INTEGER;
      const changelogIds: number[] = [];
      for await (const id of changelogManager.listIds()) if (id >= changelogEarliest && id <= upTo) changelogIds.push(id);
      const changelogs: Snapshot[] = [];
      for await (const c of mapOrdered(changelogIds, METADATA_READ_CONCURRENCY, (id) => changelogManager.tryGet(id))) {
        if (c?.changelogManifestList) changelogs.push(c); // null: expired meanwhile
      }
      uses.push({ branch, wholes, adders, changelogs });
    }
    return new OtherBranches(io, paths, uses);
  }

  /** Every metadata file name (manifest lists, manifests, index manifests and files, statistics) the other branches may read. */
  async metadataNames(signal?: AbortSignal): Promise<Set<string>> {
    const out = new Set<string>();
    for (const u of this.uses) {
      for (const { s, what } of [...u.wholes, ...u.adders.map((a) => ({ s: a, what: `snapshot ${a.id} of branch '${u.branch}'` }))]) {
        checkAborted(signal);
        for (const listName of manifestListNames(s)) {
          out.add(listName);
          const list = await tryReadManifestList(this.io, this.paths, listName);
          if (list === null) throw this.missing(what, listName);
          for (const m of list) out.add(m.fileName);
        }
        if (s.indexManifest) {
          out.add(s.indexManifest);
          const index = await tryReadIndexManifest(this.io, this.paths, s.indexManifest);
          if (index === null) throw this.missing(what, s.indexManifest);
          for (const e of index) out.add(e.fileName);
        }
        if (s.statistics) out.add(s.statistics);
      }
      for (const c of u.changelogs) {
        checkAborted(signal);
        const listName = c.changelogManifestList!;
        out.add(listName);
        const list = await tryReadManifestList(this.io, this.paths, listName);
        if (list === null) throw this.missing(`changelog ${c.id} of branch '${u.branch}'`, listName);
        for (const m of list) out.add(m.fileName);
      }
    }
    return out;
  }

  /**
   * Removes from `candidates` (data or changelog file paths, as `locator` renders them) every file
   * another branch may still read. Returns how many were kept.
   */
  async keepUsed(candidates: Map<string, unknown> | Set<string>, locator: DataFileLocator, signal?: AbortSignal): Promise<number> {
    const before = candidates.size;
    for (const u of this.uses) {
      for (const { s, what } of u.wholes) {
        if (candidates.size === 0) return before;
        checkAborted(signal);
        // Live files: net count over the base and delta lists (a file added and deleted is not live).
        const net = new Map<string, number>();
        for (const m of await this.lists([s.baseManifestList, s.deltaManifestList], what)) {
          await this.entries(
            m,
            what,
            (path, add) => {
              if (candidates.has(path)) net.set(path, (net.get(path) ?? 0) + (add ? 1 : -1));
            },
            locator,
          );
        }
        for (const [path, n] of net) if (n > 0) candidates.delete(path);
        // Its changelog files, which live next to the data files.
        if (s.changelogManifestList) await this.dropAdded(s, [s.changelogManifestList], what, candidates, locator);
      }
      for (const s of u.adders) {
        if (candidates.size === 0) return before;
        checkAborted(signal);
        const lists = [s.deltaManifestList, ...(s.changelogManifestList ? [s.changelogManifestList] : [])];
        await this.dropAdded(s, lists, `snapshot ${s.id} of branch '${u.branch}'`, candidates, locator);
      }
      for (const c of u.changelogs) {
        if (candidates.size === 0) return before;
        checkAborted(signal);
        await this.dropAdded(c, [c.changelogManifestList!], `changelog ${c.id} of branch '${u.branch}'`, candidates, locator);
      }
    }
    return before - candidates.size;
  }

  /** The files of `files` no other branch may still read (see {@link keepUsed}), in their order. */
  async unused<F extends { readonly path: string }>(files: readonly F[], locator: DataFileLocator, signal?: AbortSignal): Promise<F[]> {
    if (files.length === 0) return [];
    const candidates = new Set(files.map((f) => f.path));
    await this.keepUsed(candidates, locator, signal);
    return files.filter((f) => candidates.has(f.path));
  }

  /** Removes from `candidates` the files the manifests of `lists` add. */
  private async dropAdded(
    s: Snapshot,
    listNames: readonly string[],
    what: string,
    candidates: Map<string, unknown> | Set<string>,
    locator: DataFileLocator,
  ): Promise<void> {
    for (const m of await this.lists(listNames, what)) {
      await this.entries(
        m,
        what,
        (path, add) => {
          if (add) candidates.delete(path);
        },
        locator,
      );
    }
  }

  private async lists(listNames: readonly string[], what: string): Promise<ManifestFileMeta[]> {
    const out: ManifestFileMeta[] = [];
    for (const name of listNames) {
      const list = await tryReadManifestList(this.io, this.paths, name);
      if (list === null) throw this.missing(what, name);
      out.push(...list);
    }
    return out;
  }

  private async entries(
    m: ManifestFileMeta,
    what: string,
    visit: (path: string, add: boolean) => void,
    locator: DataFileLocator,
  ): Promise<void> {
    try {
      for await (const e of readManifestEntries(this.io, this.paths.manifestPath(m.fileName))) {
        visit(locator.dataFile(e), e.kind === 'ADD');
        for (const x of locator.extraFiles(e)) visit(x, e.kind === 'ADD');
      }
    } catch (err) {
      if (err instanceof NotFoundError) throw this.missing(what, m.fileName);
      throw err;
    }
  }

  private missing(what: string, name: string): MaintenanceError {
    return new MaintenanceError(
      `${what} of ${this.paths.root} references '${name}', which does not exist; stopped before deleting files that another branch might need`,
    );
  }
}
