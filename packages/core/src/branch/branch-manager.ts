/**
 * Branches as Java Paimon keeps them (`BranchManager` / `FileSystemBranchManager`): every branch
 * other than `main` is a directory `branch/branch-<name>/` holding its own `schema/`, `snapshot/`
 * and `tag/` (and `changelog/`, `consumer/` once used). Data files, manifests and index files of
 * every branch live in the table's own directories, so creating a branch copies metadata only.
 *
 * - An empty branch gets copies of the schemas of the branch it is made from (0 up to the latest).
 * - A branch from a tag gets copies of the tag file, of the tagged snapshot's file and of the
 *   schemas up to the snapshot's schema: its history starts at the tagged snapshot's id.
 * - Deleting a branch deletes its directory, nothing else: files only it wrote become orphans
 *   (reclaimed by orphan cleanup, which keeps every file any branch or tag still uses).
 * - Fast-forward ({@link fastForwardBranch}) replaces the target's history from the branch's
 *   earliest snapshot on with the branch's.
 *
 * Like Java, none of this is safe against concurrent writers of the branches involved: stop them.
 */
import { promises as fs } from 'node:fs';
import { parseLocation, type FileIO } from '@tidemark/storage';
import { serializeSnapshot, type Snapshot } from '@tidemark/format';
import { TableNotFoundError } from '../errors.js';
import { readIfExists } from '../meta-files.js';
import { metadataPaths, type FileStorePathFactory } from '../path-factory.js';
import { SchemaManager } from '../schema-manager.js';
import { SnapshotManager } from '../snapshot-manager.js';
import { BRANCH_PREFIX, MAIN_BRANCH, branchMetadataRoot, branchesDir } from '../table-paths.js';
import { TagManager } from '../tag-manager.js';
import { BranchAlreadyExistsError, BranchNotFoundError, InvalidBranchNameError } from './branch-errors.js';
import { checkBranchReference, isMainBranch, validateBranchName } from './branch-names.js';
import { fastForwardBranch, type FastForwardOptions, type FastForwardResult } from './fast-forward.js';

/** One branch as {@link BranchManager.list} describes it. */
export interface BranchInfo {
  readonly name: string;
  /** Oldest and newest snapshot of the branch; null when it has none (an empty branch before its first commit). */
  readonly earliestSnapshotId: number | null;
  readonly latestSnapshotId: number | null;
  /** Newest schema id of the branch. */
  readonly latestSchemaId: number | null;
  /** Number of tags of the branch. */
  readonly tags: number;
  /**
   * The tag the branch was made from, as Java's `TableBranch` tells it: the branch's oldest tag
   * when it points at the branch's earliest snapshot; null otherwise.
   */
  readonly createdFromTag: string | null;
  /** When the branch directory was written (the oldest modification time of its schema files). */
  readonly createTime: Date | null;
}

/** Options of {@link BranchManager.create}. */
export interface CreateBranchOptions {
  /** Start the branch at this tag of the current branch (default: an empty branch with the current schemas). */
  readonly tag?: string;
}

/** What {@link BranchManager.create} wrote. */
export interface CreateBranchResult {
  readonly name: string;
  readonly fromTag: string | null;
  /** The snapshot the branch starts at (the tag's), null for an empty branch. */
  readonly snapshotId: number | null;
  /** Schema ids copied into the branch. */
  readonly schemaIds: readonly number[];
}

/** What {@link BranchManager.delete} deleted (or would delete, in a dry run). */
export interface DeleteBranchResult {
  readonly name: string;
  readonly snapshots: number;
  readonly tags: number;
  readonly schemas: number;
  /** Every file under the branch directory. */
  readonly files: number;
  readonly dryRun: boolean;
}

/**
 * The branches of one table, seen from one of them (`current`, default `main`): new branches are
 * made from the current branch's schemas and tags, and {@link fastForward} moves the current
 * branch.
 */
export class BranchManager {
  /** Metadata locations of the current branch. */
  readonly paths: FileStorePathFactory;

  constructor(
    readonly fileIO: FileIO,
    /** Table root (no trailing slash). */
    readonly root: string,
    /** The branch the manager works from (default `main`). */
    readonly current: string = MAIN_BRANCH,
  ) {
    this.paths = metadataPaths(root, current);
  }

  /** Metadata locations of branch `name`. */
  pathsOf(name: string): FileStorePathFactory {
    return metadataPaths(this.root, name);
  }

  /** Names of the branches other than main, sorted (directories `branch/branch-<name>/` holding a file). */
  async names(): Promise<string[]> {
    const dir = branchesDir(this.root);
    const names = new Set<string>();
    for await (const st of this.fileIO.list(dir, { recursive: true })) {
      const first = st.path.slice(dir.length + 1).split('/')[0]!;
      if (first.startsWith(BRANCH_PREFIX) && first.length > BRANCH_PREFIX.length) names.add(first.slice(BRANCH_PREFIX.length));
    }
    return [...names].sort();
  }

  /** True for main and for every branch whose directory holds a file. */
  async exists(name: string): Promise<boolean> {
    if (isMainBranch(name)) return true;
    for await (const _ of this.fileIO.list(branchMetadataRoot(this.root, name), { recursive: true })) return true;
    return false;
  }

  /**
   * Checks that branch `name` can be addressed and exists.
   *
   * @throws InvalidBranchNameError for a name no branch can have; BranchNotFoundError listing the branches.
   */
  async check(name: string): Promise<void> {
    checkBranchReference(name);
    if (!(await this.exists(name))) throw new BranchNotFoundError(name, this.root, await this.names());
  }

  /** Every branch other than main with its snapshot range, tags and origin. */
  async list(): Promise<BranchInfo[]> {
    const out: BranchInfo[] = [];
    for (const name of await this.names()) {
      const paths = this.pathsOf(name);
      const snapshots = new SnapshotManager(this.fileIO, paths);
      const [earliest, latest, schemaId, tags, createTime] = await Promise.all([
        snapshots.earliestId(),
        snapshots.latestId(),
        new SchemaManager(this.fileIO, paths).latestId(),
        new TagManager(this.fileIO, paths).list(),
        this.oldestModification(paths.schemaDir),
      ]);
      const first = tags[0];
      out.push({
        name,
        earliestSnapshotId: earliest,
        latestSnapshotId: latest,
        latestSchemaId: schemaId,
        tags: tags.length,
        createdFromTag: first !== undefined && earliest !== null && first.tag.id === earliest ? first.name : null,
        createTime,
      });
    }
    return out;
  }

  private async oldestModification(dir: string): Promise<Date | null> {
    let oldest: Date | null = null;
    for await (const st of this.fileIO.list(dir, { recursive: false }))
      if (oldest === null || st.lastModified < oldest) oldest = st.lastModified;
    return oldest;
  }

  /**
   * Creates branch `name` from the current branch: empty (copies of its schemas, as Java's
   * `createBranch(name)`), or from its tag `options.tag` (copies of the tag, the tagged snapshot and
   * the schemas up to the snapshot's, as Java's `createBranch(name, tag)`). Files are copied byte
   * for byte; a tagged snapshot that already expired is written from the tag (Java fails there).
   * Schemas go first (the first one created with create-if-absent claims the name), the snapshot
   * last, so an interrupted create leaves a branch without history: delete it and create it again.
   *
   * @throws InvalidBranchNameError; BranchAlreadyExistsError; TagNotFoundError listing the tags;
   *   TableNotFoundError when the current branch has no schema.
   */
  async create(name: string, options: CreateBranchOptions = {}): Promise<CreateBranchResult> {
    validateBranchName(name);
    if (await this.exists(name)) throw new BranchAlreadyExistsError(name, await this.describeExisting(name));
    const schemas = new SchemaManager(this.fileIO, this.paths);
    const latestSchema = await schemas.latestId();
    if (latestSchema === null) throw new TableNotFoundError(this.root, `no schema files in ${this.paths.schemaDir}`);
    const target = this.pathsOf(name);
    let snapshot: Snapshot | null = null;
    let tagBytes: Uint8Array | null = null;
    if (options.tag !== undefined) {
      const tag = await new TagManager(this.fileIO, this.paths).tag(options.tag);
      tagBytes = await this.fileIO.read(this.paths.tagPath(options.tag));
      const { tagCreateTime: _c, tagTimeRetained: _r, ...snap } = tag;
      snapshot = snap;
    }
    const upTo = snapshot === null ? latestSchema : snapshot.schemaId;
    const schemaIds = (await schemas.listIds()).filter((id) => id <= upTo);
    for (const [i, id] of schemaIds.entries()) {
      const bytes = await this.fileIO.read(this.paths.schemaPath(id));
      const created = await this.fileIO.createIfAbsent(target.schemaPath(id), bytes);
      // Two creators of one branch: the first schema decides which of them made it.
      if (created === 'already-exists' && i === 0) throw new BranchAlreadyExistsError(name);
    }
    if (snapshot !== null && tagBytes !== null) {
      await this.fileIO.write(target.tagPath(options.tag!), tagBytes);
      const snapshotBytes = (await readIfExists(this.fileIO, this.paths.snapshotPath(snapshot.id))) ?? serializeSnapshot(snapshot);
      await this.fileIO.write(target.snapshotPath(snapshot.id), snapshotBytes);
    }
    return { name, fromTag: options.tag ?? null, snapshotId: snapshot?.id ?? null, schemaIds };
  }

  /** Why an existing branch is in the way, for the error: a hint when it looks like an interrupted create. */
  private async describeExisting(name: string): Promise<string> {
    const paths = this.pathsOf(name);
    const [snapshot, schema] = await Promise.all([
      new SnapshotManager(this.fileIO, paths).latestId(),
      new SchemaManager(this.fileIO, paths).latestId(),
    ]);
    if (snapshot === null && schema === null) return ' (its directory holds no schema: an interrupted create or delete)';
    return '';
  }

  /**
   * Deletes branch `name`: every file under `branch/branch-<name>/` (snapshots and hints first,
   * schemas last, so an interrupted delete leaves a branch that still exists and can be deleted
   * again), and on local disk the directory. Files only the branch wrote become orphans; nothing
   * of another branch is touched.
   *
   * @throws InvalidBranchNameError for `main`; BranchNotFoundError.
   */
  async delete(name: string, options: { readonly dryRun?: boolean } = {}): Promise<DeleteBranchResult> {
    if (isMainBranch(name)) throw new InvalidBranchNameError(`the default branch '${MAIN_BRANCH}' cannot be deleted`);
    if (name === this.current)
      throw new InvalidBranchNameError(`branch '${name}' is the branch this table was opened on; open main to delete it`);
    await this.check(name);
    const paths = this.pathsOf(name);
    const groups: string[][] = [[], [], [], []];
    let snapshots = 0;
    let tags = 0;
    let schemas = 0;
    for await (const st of this.fileIO.list(paths.metadataRoot, { recursive: true })) {
      const rel = st.path.slice(paths.metadataRoot.length + 1);
      const dir = rel.split('/')[0];
      if (dir === 'snapshot') {
        snapshots += rel.includes('/snapshot-') ? 1 : 0;
        groups[0]!.push(st.path);
      } else if (dir === 'schema') {
        schemas++;
        groups[3]!.push(st.path);
      } else if (dir === 'tag') {
        tags++;
        groups[2]!.push(st.path);
      } else groups[1]!.push(st.path);
    }
    const files = groups.reduce((n, g) => n + g.length, 0);
    if (!options.dryRun) {
      for (const g of groups) await this.fileIO.deleteMany(g);
      await removeLocalDirectory(this.fileIO, paths.metadataRoot);
    }
    return { name, snapshots, tags, schemas, files, dryRun: options.dryRun === true };
  }

  /** Fast-forwards the current branch to branch `name`: see {@link fastForwardBranch}. */
  fastForward(name: string, options: FastForwardOptions = {}): Promise<FastForwardResult> {
    return fastForwardBranch(this, name, options);
  }
}

/** On local disk, removes the (now empty) directory tree at `location`; object stores have no directories. */
async function removeLocalDirectory(fileIO: FileIO, location: string): Promise<void> {
  if (fileIO.kind !== 'local') return;
  const parsed = parseLocation(location);
  if (parsed.scheme === 'file' && parsed.path !== undefined) await fs.rm(parsed.path, { recursive: true, force: true });
}
