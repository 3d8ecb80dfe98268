/**
 * Shared pieces of the maintenance jobs: which table they work on, where a manifest entry's file
 * lives, and tolerant readers of manifest lists / index manifests. In core because snapshot
 * expiration runs after commits; `@tidemark/maintenance` re-exports all of it.
 */
import { NotFoundError, type FileIO } from '@tidemark/storage';
import {
  readIndexManifest,
  readManifestList,
  type DataFileMeta,
  type IndexFileMeta,
  type IndexManifestEntry,
  type ManifestEntry,
  type ManifestFileMeta,
  type Snapshot,
  type TableSchema,
} from '@tidemark/format';
import { SchemaManager } from '../schema-manager.js';
import type { TablePaths } from '../table-paths.js';
import { FileStorePathFactory } from '../path-factory.js';
import { MaintenanceAbortedError, MaintenanceError } from './maintenance-errors.js';

/** What the maintenance jobs need of a table: a `Table` from `openTable()` satisfies it. */
export interface MaintainedTable {
  readonly fileIO: FileIO;
  readonly paths: TablePaths;
}

/** Progress report of a running job. */
export interface MaintenanceProgress {
  /** Current step, e.g. `data-files`, `manifests`, `snapshots`, `listing`, `deleting`. */
  readonly phase: string;
  /** Items done in this phase. */
  readonly done: number;
  /** Items expected in this phase, when known. */
  readonly total?: number;
  /** Bytes freed so far (whole job). */
  readonly bytesFreed: number;
}

/** Common options of the maintenance jobs. */
export interface MaintenanceRunOptions {
  /** Compute and report what would be deleted, delete nothing. */
  readonly dryRun?: boolean;
  /**
   * Dry runs: collect the locations in {@link MaintenanceSummary.deleted} (default true). False keeps
   * only the counts and bytes, so a dry run over a table with very many orphans holds no path list.
   */
  readonly listDeleted?: boolean;
  /** Called as work proceeds (cheap; may be called often). */
  readonly onProgress?: (progress: MaintenanceProgress) => void;
  /** Aborting stops the job between steps; a rerun finishes the work. */
  readonly signal?: AbortSignal;
  /** Clock (tests). */
  readonly now?: () => number;
}

/** Result of a maintenance job. */
export interface MaintenanceSummary {
  readonly filesDeleted: number;
  /** Sum of the sizes of deleted files, as far as they are known (from metadata or listings). */
  readonly bytesFreed: number;
  readonly durationMs: number;
  readonly dryRun: boolean;
  /** Locations that would be deleted; only present for dry runs (unless `listDeleted` is false). */
  readonly deleted?: readonly string[];
}

/** Latest schema of the table (the options may have changed since a `Table` was opened). */
export async function latestSchema(table: MaintainedTable): Promise<TableSchema> {
  return new SchemaManager(table.fileIO, table.paths).latest();
}

/**
 * Resolves a manifest entry's data file location from its partition row and bucket, with the
 * path factory of `schema` (so `data-file.path-directory` and the partition naming options of the
 * schema apply whatever `paths` was built with).
 */
export class DataFileLocator {
  private readonly factory: FileStorePathFactory;

  constructor(paths: TablePaths, schema: TableSchema) {
    for (const k of schema.partitionKeys) {
      if (!schema.fields.some((x) => x.name === k))
        throw new MaintenanceError(`partition key '${k}' is not a column of table ${paths.root}`);
    }
    this.factory =
      paths instanceof FileStorePathFactory && paths.schemaOf === schema
        ? paths
        : new FileStorePathFactory(paths.root, schema, { branch: paths.branch });
  }

  /** Relative partition directory (`k=v/…/`, '' when unpartitioned). */
  partitionDir(partition: Uint8Array): string {
    return this.factory.partitionPath(partition);
  }

  /** Full location of the entry's file. */
  dataFile(entry: ManifestEntry): string {
    return this.factory.dataFilePath(entry.partition, entry.bucket, entry.file.fileName, entry.file.externalPath);
  }

  /** Full locations of the entry's extra files (sidecars live next to the data file). */
  extraFiles(entry: ManifestEntry): string[] {
    return this.factory.extraFilePaths(this.dataFile(entry), entry.file.extraFiles);
  }

  /** Full location of `file` of a commit message's (partition, bucket). */
  fileLocation(partition: Uint8Array, bucket: number, file: DataFileMeta): string {
    return this.factory.dataFilePath(partition, bucket, file.fileName, file.externalPath);
  }

  /** Location of `file` relative to the table root (as in-flight records store it), or null for an external file. */
  relativePath(partition: Uint8Array, bucket: number, file: DataFileMeta): string | null {
    return file.externalPath ? null : this.factory.relativeDataFilePath(partition, bucket, file.fileName);
  }

  /** `index/<file>` relative to the table root (as in-flight records store it), or null for an external index file. */
  relativeIndexPath(file: IndexFileMeta): string | null {
    return file.externalPath ? null : `index/${file.fileName}`;
  }

  /** Full location of an index file. */
  indexLocation(file: IndexFileMeta): string {
    return this.factory.indexFilePath(file.fileName, file.externalPath);
  }
}

/** Reads a manifest list; null when it does not exist. */
export async function tryReadManifestList(
  io: FileIO,
  paths: TablePaths,
  name: string | undefined | null,
): Promise<ManifestFileMeta[] | null> {
  if (!name) return [];
  try {
    return await readManifestList(io, paths.manifestPath(name));
  } catch (e) {
    if (e instanceof NotFoundError) return null;
    throw e;
  }
}

/** Reads an index manifest; null when it does not exist. */
export async function tryReadIndexManifest(
  io: FileIO,
  paths: TablePaths,
  name: string | undefined | null,
): Promise<IndexManifestEntry[] | null> {
  if (!name) return [];
  try {
    return await readIndexManifest(io, paths.manifestPath(name));
  } catch (e) {
    if (e instanceof NotFoundError) return null;
    throw e;
  }
}

/** Names of the manifest lists a snapshot references. */
export function manifestListNames(s: Snapshot): string[] {
  const out = [s.baseManifestList, s.deltaManifestList];
  if (s.changelogManifestList) out.push(s.changelogManifestList);
  return out;
}

/** Throws the signal's reason when aborted. */
export function checkAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw new MaintenanceAbortedError(signal.reason);
  }
}
