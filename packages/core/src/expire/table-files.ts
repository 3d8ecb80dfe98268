/**
 * Shared pieces of the maintenance jobs: which table they work on, where a manifest entry's file
 * lives, and tolerant readers of manifest lists / index manifests. In core because snapshot
 * expiration runs after commits; `@tidemark/maintenance` re-exports all of it.
 */
import { NotFoundError, type FileIO } from '@tidemark/storage';
import {
  deserializeBinaryRow,
  partitionPath,
  readIndexManifest,
  readManifestList,
  type DataType,
  type IndexManifestEntry,
  type ManifestEntry,
  type ManifestFileMeta,
  type Snapshot,
  type TableSchema,
} from '@tidemark/format';
import { SchemaManager } from '../schema-manager.js';
import type { TablePaths } from '../table-paths.js';
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
  /** Locations that would be deleted; only present for dry runs. */
  readonly deleted?: readonly string[];
}

/** Latest schema of the table (the options may have changed since a `Table` was opened). */
export async function latestSchema(table: MaintainedTable): Promise<TableSchema> {
  return new SchemaManager(table.fileIO, table.paths).latest();
}

/** Resolves a manifest entry's data file location from its partition row and bucket (cached per partition). */
export class DataFileLocator {
  private readonly types: readonly DataType[];
  private readonly cache = new Map<string, string>();
  private readonly legacyName: boolean;
  private readonly defaultName: string | undefined;

  constructor(
    private readonly paths: TablePaths,
    private readonly schema: TableSchema,
  ) {
    this.types = schema.partitionKeys.map((k) => {
      const f = schema.fields.find((x) => x.name === k);
      if (f === undefined) throw new MaintenanceError(`partition key '${k}' is not a column of table ${paths.root}`);
      return f.type;
    });
    this.legacyName = (schema.options['partition.legacy-name'] ?? 'true').trim().toLowerCase() !== 'false';
    this.defaultName = schema.options['partition.default-name'];
  }

  /** Relative partition directory (`k=v/…/`, '' when unpartitioned). */
  partitionDir(partition: Uint8Array): string {
    const key = Buffer.from(partition.buffer, partition.byteOffset, partition.byteLength).toString('hex');
    let dir = this.cache.get(key);
    if (dir === undefined) {
      const values = deserializeBinaryRow(partition, this.types);
      dir = partitionPath(this.schema.partitionKeys, this.types, values, {
        legacyName: this.legacyName,
        ...(this.defaultName !== undefined ? { defaultName: this.defaultName } : {}),
      });
      if (this.cache.size > 100_000) this.cache.clear();
      this.cache.set(key, dir);
    }
    return dir;
  }

  /** Full location of the entry's file. */
  dataFile(entry: ManifestEntry): string {
    return this.paths.dataFilePath(this.partitionDir(entry.partition), entry.bucket, entry.file.fileName, entry.file.externalPath);
  }

  /** Full locations of the entry's extra files (sidecars live next to the data file). */
  extraFiles(entry: ManifestEntry): string[] {
    const main = this.dataFile(entry);
    const dir = main.slice(0, main.lastIndexOf('/'));
    return entry.file.extraFiles.map((name) => `${dir}/${name}`);
  }
}

/** Reads a manifest list; null when it does not exist. */
export async function tryReadManifestList(io: FileIO, paths: TablePaths, name: string | undefined | null): Promise<ManifestFileMeta[] | null> {
  if (!name) return [];
  try {
    return await readManifestList(io, paths.manifestPath(name));
  } catch (e) {
    if (e instanceof NotFoundError) return null;
    throw e;
  }
}

/** Reads an index manifest; null when it does not exist. */
export async function tryReadIndexManifest(io: FileIO, paths: TablePaths, name: string | undefined | null): Promise<IndexManifestEntry[] | null> {
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
