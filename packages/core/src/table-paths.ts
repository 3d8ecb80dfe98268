/**
 * Every location of a Paimon table, derived from the table root (see docs/format.md, "Layout").
 * Pure string computation: nothing here touches storage.
 */
import { joinPath } from '@tidemark/storage';

/** Options that move parts of the layout. */
export interface TablePathsOptions {
  /**
   * Branch whose metadata (schema/, snapshot/, tag/) to address; `main` (the default) is the
   * table root itself, other branches live under `branch/branch-<name>/`. Data files, manifests
   * and index files are always in the table root.
   */
  readonly branch?: string;
  /** Table option `data-file.path-directory`: an extra directory between the root and partition dirs. */
  readonly dataFilePathDirectory?: string;
}

/** File name prefix of snapshots (`snapshot-<id>`). */
export const SNAPSHOT_PREFIX = 'snapshot-';
/** File name prefix of long-lived changelog metadata (`changelog/changelog-<id>`). */
export const CHANGELOG_PREFIX = 'changelog-';
/** File name prefix of schemas (`schema-<id>`). */
export const SCHEMA_PREFIX = 'schema-';
/** File name prefix of tags (`tag-<name>`). */
export const TAG_PREFIX = 'tag-';
/** Name of the hint file holding the latest snapshot id. */
export const LATEST_HINT = 'LATEST';
/** Name of the hint file holding the earliest snapshot id. */
export const EARLIEST_HINT = 'EARLIEST';
/** The default branch: its metadata is the table root itself. */
export const MAIN_BRANCH = 'main';
/** Directory name prefix of a branch under `branch/` (`branch-<name>`). */
export const BRANCH_PREFIX = 'branch-';

/** `<root>/branch`: the directory holding every branch other than main. */
export function branchesDir(root: string): string {
  return joinPath(root, 'branch');
}

/** Metadata root of `branch`: the table root for main, else `<root>/branch/branch-<name>` (Java's `BranchManager.branchPath`). */
export function branchMetadataRoot(root: string, branch: string): string {
  return branch === MAIN_BRANCH ? root : joinPath(branchesDir(root), `${BRANCH_PREFIX}${branch}`);
}

/** Locations of one table's files. */
export class TablePaths {
  /** Directory holding this branch's schema/, snapshot/ and tag/ directories. */
  readonly metadataRoot: string;
  readonly branch: string;

  constructor(
    /** Table root, e.g. `s3://bucket/wh/db.db/t` (no trailing slash needed). */
    readonly root: string,
    private readonly options: TablePathsOptions = {},
  ) {
    this.branch = options.branch ?? MAIN_BRANCH;
    this.metadataRoot = branchMetadataRoot(root, this.branch);
  }

  get schemaDir(): string {
    return joinPath(this.metadataRoot, 'schema');
  }

  get snapshotDir(): string {
    return joinPath(this.metadataRoot, 'snapshot');
  }

  /** `changelog/`: metadata of changelogs kept after their snapshot expired. */
  get changelogDir(): string {
    return joinPath(this.metadataRoot, 'changelog');
  }

  /** `changelog/changelog-<id>` */
  changelogMetaPath(id: number): string {
    return joinPath(this.changelogDir, `${CHANGELOG_PREFIX}${id}`);
  }

  /** `changelog/LATEST` (best-effort hint) */
  get changelogLatestHint(): string {
    return joinPath(this.changelogDir, LATEST_HINT);
  }

  /** `changelog/EARLIEST` (best-effort hint) */
  get changelogEarliestHint(): string {
    return joinPath(this.changelogDir, EARLIEST_HINT);
  }

  get tagDir(): string {
    return joinPath(this.metadataRoot, 'tag');
  }

  get manifestDir(): string {
    return joinPath(this.root, 'manifest');
  }

  get indexDir(): string {
    return joinPath(this.root, 'index');
  }

  /** `statistics/`: table statistics files (in the table root, as manifests are). */
  get statisticsDir(): string {
    return joinPath(this.root, 'statistics');
  }

  /** `schema/schema-<id>` */
  schemaPath(id: number): string {
    return joinPath(this.schemaDir, `${SCHEMA_PREFIX}${id}`);
  }

  /** `snapshot/snapshot-<id>` */
  snapshotPath(id: number): string {
    return joinPath(this.snapshotDir, `${SNAPSHOT_PREFIX}${id}`);
  }

  /** `snapshot/LATEST` (best-effort hint) */
  get latestHint(): string {
    return joinPath(this.snapshotDir, LATEST_HINT);
  }

  /** `snapshot/EARLIEST` (best-effort hint) */
  get earliestHint(): string {
    return joinPath(this.snapshotDir, EARLIEST_HINT);
  }

  /** `manifest/<name>` for manifest lists, manifests and index manifests. */
  manifestPath(name: string): string {
    return joinPath(this.manifestDir, name);
  }

  /** `index/<name>` for deletion vector and hash index files. */
  indexPath(name: string): string {
    return joinPath(this.indexDir, name);
  }

  /** `statistics/<name>` */
  statisticsPath(name: string): string {
    return joinPath(this.statisticsDir, name);
  }

  /** `tag/tag-<name>` */
  tagPath(name: string): string {
    return joinPath(this.tagDir, `${TAG_PREFIX}${name}`);
  }

  /**
   * Directory of one bucket. `partitionPath` is the escaped partition path (`k1=v1/k2=v2`, with or
   * without trailing slash; empty for unpartitioned tables). `bucket` may be a number or a
   * directory suffix such as `postpone`.
   */
  bucketDir(partitionPath: string, bucket: number | string): string {
    const base = this.options.dataFilePathDirectory ? joinPath(this.root, this.options.dataFilePathDirectory) : this.root;
    return joinPath(base, partitionPath, `bucket-${bucket}`);
  }

  /** Location of a data file: its `_EXTERNAL_PATH` when the manifest has one, else in the bucket dir. */
  dataFilePath(partitionPath: string, bucket: number | string, fileName: string, externalPath?: string | null): string {
    if (externalPath) return externalPath;
    return joinPath(this.bucketDir(partitionPath, bucket), fileName);
  }
}
