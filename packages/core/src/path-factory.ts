/**
 * The one place that turns table coordinates into locations (Paimon's `FileStorePathFactory`):
 * partition values or serialized partition rows become partition directories (with
 * `partition.default-name` and `partition.legacy-name`), and (partition, bucket, file name)
 * becomes a data, changelog or index file location under `data-file.path-directory`, unless the
 * manifest gives an `_EXTERNAL_PATH`. Callers never render partition strings or join paths.
 */
import { joinPath } from '@tidemark/storage';
import { deserializeBinaryRow, parsePartitionPath, partitionPath, type DataType, type TableSchema, type Value } from '@tidemark/format';
import { coreOptions, type CoreOptions } from './core-options.js';
import { TablePaths } from './table-paths.js';
import { TidemarkError } from './errors.js';

/**
 * A partition as callers hold it: the serialized BinaryRow of a manifest entry or commit message,
 * or the partition column values in partition-key order.
 */
export type PartitionRef = Uint8Array | readonly Value[];

/** Settings of {@link FileStorePathFactory}. */
export interface PathFactoryOptions {
  /** Branch whose metadata (schema/, snapshot/, tag/) to address (default `main`). */
  readonly branch?: string;
  /** Options of `schema` (default: {@link coreOptions} of the schema). */
  readonly options?: CoreOptions;
}

/** A data location was asked of a path factory built without a schema. */
export class PartitionPathError extends TidemarkError {}

/**
 * Every location of one table. Metadata locations (schema, snapshot, tag, manifest, index) come
 * from {@link TablePaths}; data locations need the schema (partition keys and types) and options.
 * A factory built without a schema serves metadata only (catalog work before a table exists).
 */
export class FileStorePathFactory extends TablePaths {
  private readonly schema: TableSchema | null;
  private partitionTypes: readonly DataType[] | null = null;
  private readonly coreOptions: CoreOptions | null;
  private readonly partitionCache = new Map<string, string>();

  constructor(root: string, schema: TableSchema | null = null, options: PathFactoryOptions = {}) {
    const o = schema === null ? (options.options ?? null) : (options.options ?? coreOptions(schema));
    const dir = o?.dataFilePathDirectory ?? null;
    super(root.replace(/\/+$/, '') || root, {
      ...(options.branch !== undefined ? { branch: options.branch } : {}),
      ...(dir !== null ? { dataFilePathDirectory: dir } : {}),
    });
    this.coreOptions = o;
    this.schema = schema;
  }

  /** A factory for the same table on another branch (metadata under `branch/branch-<name>/`). */
  forBranch(branch: string): FileStorePathFactory {
    return new FileStorePathFactory(this.root, null, { branch, ...(this.coreOptions ? { options: this.coreOptions } : {}) });
  }

  private types(): readonly DataType[] {
    const schema = this.schema;
    if (schema === null) throw new PartitionPathError(`the path factory of ${this.root} has no schema: it cannot locate data files`);
    this.partitionTypes ??= schema.partitionKeys.map((k) => {
      const f = schema.fields.find((x) => x.name === k);
      if (f === undefined) throw new PartitionPathError(`partition key '${k}' is not a column of table ${this.root} (schema ${schema.id})`);
      return f.type;
    });
    return this.partitionTypes;
  }

  /** Partition column values of a serialized partition row. */
  partitionValues(partition: Uint8Array): Value[] {
    return deserializeBinaryRow(partition, this.types());
  }

  /**
   * Relative partition directory, `k1=v1/k2=v2/` (with trailing slash; `''` when unpartitioned),
   * rendered as Java Paimon does. Rows are cached by their bytes.
   *
   * @throws FormatError when a value does not fit its column type; SchemaError for a type with no string form.
   */
  partitionPath(partition: PartitionRef): string {
    const types = this.types();
    if (types.length === 0) return '';
    if (partition instanceof Uint8Array) {
      const key = Buffer.from(partition.buffer, partition.byteOffset, partition.byteLength).toString('hex');
      let dir = this.partitionCache.get(key);
      if (dir === undefined) {
        dir = this.render(deserializeBinaryRow(partition, types));
        if (this.partitionCache.size > 100_000) this.partitionCache.clear();
        this.partitionCache.set(key, dir);
      }
      return dir;
    }
    return this.render(partition);
  }

  private render(values: readonly Value[]): string {
    const o = this.coreOptions;
    return partitionPath(this.schema!.partitionKeys, this.types(), values, {
      legacyName: o?.partitionLegacyName ?? true,
      ...(o !== null ? { defaultName: o.partitionDefaultName } : {}),
    });
  }

  /** Partition as `key → value` strings, as in directory names (escapes undone). */
  partitionSpec(partition: PartitionRef): Record<string, string> {
    const spec: Record<string, string> = {};
    for (const [k, v] of parsePartitionPath(this.partitionPath(partition))) spec[k] = v;
    return spec;
  }

  /**
   * Directory of one bucket. `partition` is a partition row or values, or (for callers that
   * already hold one) a rendered relative partition directory. `bucket` may be a number or a
   * directory suffix such as `postpone`.
   */
  override bucketDir(partition: PartitionRef | string, bucket: number | string): string {
    return super.bucketDir(typeof partition === 'string' ? partition : this.partitionPath(partition), bucket);
  }

  /** Location of a data file: its `_EXTERNAL_PATH` when the manifest has one, else in the bucket dir. */
  override dataFilePath(partition: PartitionRef | string, bucket: number | string, fileName: string, externalPath?: string | null): string {
    if (externalPath) return externalPath;
    return joinPath(this.bucketDir(partition, bucket), fileName);
  }

  /**
   * A data file's location relative to the table root (`[<data dir>/]<partition>bucket-<b>/<file>`),
   * as in-flight records store it.
   */
  relativeDataFilePath(partition: PartitionRef | string, bucket: number | string, fileName: string): string {
    const full = this.dataFilePath(partition, bucket, fileName);
    const prefix = this.root.endsWith('/') ? this.root : `${this.root}/`;
    return full.startsWith(prefix) ? full.slice(prefix.length) : full;
  }

  /** Locations of a data file's extra files (sidecars such as file indexes live next to it). */
  extraFilePaths(dataFilePath: string, names: readonly string[]): string[] {
    const dir = dataFilePath.slice(0, dataFilePath.lastIndexOf('/'));
    return names.map((name) => `${dir}/${name}`);
  }

  /** The schema this factory renders partitions with (null for a metadata-only factory). */
  get schemaOf(): TableSchema | null {
    return this.schema;
  }

  /** Location of a changelog file (changelog files live next to the data files of their bucket). */
  changelogFilePath(partition: PartitionRef | string, bucket: number | string, fileName: string, externalPath?: string | null): string {
    return this.dataFilePath(partition, bucket, fileName, externalPath);
  }

  /** `manifest/<name>` of a manifest list (base, delta or changelog list of a snapshot). */
  manifestListPath(name: string): string {
    return this.manifestPath(name);
  }

  /** `manifest/<name>` of a manifest file or index manifest. */
  manifestFilePath(name: string): string {
    return this.manifestPath(name);
  }

  /** Location of an index file (deletion vectors, hash index): its external path, else `index/<name>`. */
  indexFilePath(name: string, externalPath?: string | null): string {
    return externalPath ? externalPath : this.indexPath(name);
  }
}

/** A metadata-only path factory (schema/, snapshot/, tag/, manifest/) for a table root. */
export function metadataPaths(root: string, branch?: string): FileStorePathFactory {
  return new FileStorePathFactory(root, null, branch !== undefined ? { branch } : {});
}
