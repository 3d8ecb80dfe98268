/**
 * Skipping data files by their file index on read (Paimon's `FileIndexPredicate` for `=` and
 * `IN`): a file whose index proves that an equality conjunct of the filter holds for none of its
 * rows is not opened. The filter given must be one that is safe to apply to each file on its own
 * (what a read also skips row groups by): any column of an append table or of a deletion-vector
 * table's files, only key columns of a merge-on-read table (a file without the key contributes
 * nothing to the key's merged row, whereas a file without a value may still hold the key's newest
 * version). Embedded indexes are read from the manifest entry; sidecars (`<file>.index`) with one
 * request each, kept in the table's read cache. Files written without an index, index types this
 * reader does not know, columns whose type changed since the file was written, and literals it
 * cannot hash all mean "read the file".
 */
import type { FileIO } from '@tidemark/storage';
import { FileIndexFile, fileIndexMightContain, type DataField, type DataType, type TableSchema } from '@tidemark/format';
import type { Predicate } from '../predicate.js';
import { fixedValues } from '../scan/bucket-filter.js';
import type { PlannedFile } from '../scan/data-split.js';
import type { ReadCache } from '../read/read-cache.js';
import { FILE_INDEX_SUFFIX } from './data-file-index-writer.js';

/** What the file index did for one read (counted as the read goes). */
export interface FileIndexReadStats {
  /** Data files that had an index to ask. */
  filesChecked: number;
  /** Data files not read because their index ruled the filter out. */
  filesSkipped: number;
  /** Sidecar index files read from storage (cache hits are not counted). */
  sidecarReads: number;
}

/** Asks each file's index about the filter's equality conjuncts; see the module comment. */
export class FileIndexFilter {
  private readonly fixed: ReadonlyMap<string, unknown[]>;
  private readonly byName: ReadonlyMap<string, DataField>;

  /**
   * @param filter the per-file-safe filter, naming columns of `fields` (the read schema)
   * @param schemaOf the schema a file was written with (by `_SCHEMA_ID`)
   */
  constructor(
    filter: Predicate,
    fields: readonly DataField[],
    private readonly fileIO: FileIO,
    private readonly schemaOf: (id: number) => Promise<TableSchema>,
    private readonly cache: ReadCache | undefined,
    readonly stats: FileIndexReadStats,
  ) {
    this.fixed = fixedValues(filter);
    this.byName = new Map(fields.map((f) => [f.name, f]));
  }

  /** Whether the filter fixes some column to values (else no index can rule a file out). */
  get active(): boolean {
    return this.fixed.size > 0;
  }

  /** True when `file`'s index proves that no row of it passes the filter. */
  async rulesOut(file: PlannedFile): Promise<boolean> {
    const meta = file.meta;
    const sidecar = meta.extraFiles.find((x) => x.endsWith(FILE_INDEX_SUFFIX));
    if (meta.embeddedIndex === null && sidecar === undefined) return false;
    const schema = await this.schemaOf(meta.schemaId);
    const probes: Array<{ name: string; type: DataType; values: unknown[] }> = [];
    for (const [column, values] of this.fixed) {
      const field = this.byName.get(column);
      const written = field === undefined ? undefined : schema.fields.find((f) => f.id === field.id);
      // A column added later, or whose type changed since: the file's values were hashed otherwise.
      if (field === undefined || written === undefined || !sameType(field.type, written.type)) continue;
      probes.push({ name: written.name, type: written.type, values });
    }
    if (probes.length === 0) return false;
    this.stats.filesChecked++;
    const index =
      meta.embeddedIndex !== null
        ? FileIndexFile.parse(meta.embeddedIndex, `${file.path} (embedded file index)`)
        : await this.sidecar(file.path.slice(0, file.path.lastIndexOf('/') + 1) + sidecar!);
    const out = probes.some((p) => !fileIndexMightContain(index, p.name, p.type, p.values));
    if (out) this.stats.filesSkipped++;
    return out;
  }

  private sidecar(path: string): Promise<FileIndexFile> {
    const load = async (): Promise<FileIndexFile> => {
      this.stats.sidecarReads++;
      return FileIndexFile.parse(await this.fileIO.read(path), path);
    };
    return this.cache === undefined ? load() : this.cache.fileIndex(path, load);
  }
}

/** The same type up to nullability (the only types with an index are flat). */
function sameType(a: DataType, b: DataType): boolean {
  const { nullable: _a, ...x } = a;
  const { nullable: _b, ...y } = b;
  return JSON.stringify(x) === JSON.stringify(y);
}
