/**
 * The data-file index a table's options ask for (Paimon's `FileIndexOptions`): the columns of
 * `file-index.bloom-filter.columns`, each with `file-index.bloom-filter.<column>.items` and
 * `.fpp` (Paimon's defaults 1,000,000 and 0.1), and `file-index.in-manifest-threshold`. Other
 * index types (bitmap, bsi, range-bitmap) are Java's to write; tidemark writes bloom filters only.
 */
import {
  BLOOM_FILTER_DEFAULT_FPP,
  BLOOM_FILTER_DEFAULT_ITEMS,
  BLOOM_FILTER_INDEX,
  bloomFilterSupports,
  type DataField,
  type TableSchema,
} from '@tidemark/format';
import { coreOptions, InvalidOptionError, OPTION, type CoreOptions } from '../core-options.js';

/** One column's bloom filter. */
export interface BloomFilterColumn {
  readonly field: DataField;
  /** Position of the column in the schema's fields. */
  readonly position: number;
  readonly items: number;
  readonly fpp: number;
}

/** What a writer indexes in each data file. */
export interface FileIndexSettings {
  readonly bloomFilters: readonly BloomFilterColumn[];
  /** Indexes up to this many bytes go into the manifest; larger ones into `<data file>.index`. */
  readonly inManifestThreshold: number;
}

const PREFIX = `file-index.${BLOOM_FILTER_INDEX}.`;
const bySchema = new WeakMap<TableSchema, FileIndexSettings | null>();

/**
 * The file index of `schema`'s options, or null when no column has one.
 *
 * @throws InvalidOptionError naming the option and column: an empty or unknown column, a column
 *   type Paimon's bloom filter cannot hash (BOOLEAN, DECIMAL, nested types), a setting for a column
 *   that is not listed, or a bad `items` / `fpp`
 */
export function fileIndexSettings(schema: TableSchema, options: CoreOptions = coreOptions(schema)): FileIndexSettings | null {
  let settings = bySchema.get(schema);
  if (settings === undefined) bySchema.set(schema, (settings = parseSettings(schema, options)));
  return settings;
}

function parseSettings(schema: TableSchema, options: CoreOptions): FileIndexSettings | null {
  const key = OPTION.FILE_INDEX_BLOOM_FILTER_COLUMNS;
  const raw = options.get(key);
  const names = options.fileIndexBloomFilterColumns;
  const listed = new Set<string>();
  const bloomFilters = names.map((name) => {
    if (name === '') throw new InvalidOptionError(key, raw!, 'column names', `table option '${key}' = '${raw}' has an empty column name`);
    const position = schema.fields.findIndex((f) => f.name === name);
    if (position < 0) {
      throw new InvalidOptionError(
        key,
        raw!,
        'columns of the table',
        `table option '${key}' names '${name}', which is not a column of the table (columns: ${schema.fields.map((f) => f.name).join(', ')})`,
      );
    }
    const field = schema.fields[position]!;
    if (!bloomFilterSupports(field.type)) {
      throw new InvalidOptionError(
        key,
        raw!,
        'columns of a type the bloom filter can hash',
        `table option '${key}' names '${name}' of type ${field.type.root}, which Paimon's bloom filter does not support ` +
          '(strings, binary, integer types, floats, date, time and timestamps are supported)',
      );
    }
    listed.add(name);
    return { field, position, items: items(options, name), fpp: fpp(options, name) };
  });
  for (const k of Object.keys(options.raw)) {
    if (!k.startsWith(PREFIX) || k === key) continue;
    const parts = k.slice('file-index.'.length).split('.');
    // Paimon ignores keys that are not `<type>.<column>.<setting>`.
    if (parts.length !== 3) continue;
    if (!listed.has(parts[1]!)) {
      throw new InvalidOptionError(
        k,
        options.get(k)!,
        `a column listed in '${key}'`,
        `table option '${k}' is for column '${parts[1]}', which '${key}' does not list`,
      );
    }
  }
  return bloomFilters.length === 0 ? null : { bloomFilters, inManifestThreshold: options.fileIndexInManifestThreshold };
}

function items(options: CoreOptions, column: string): number {
  const k = `${PREFIX}${column}.items`;
  const v = options.get(k);
  if (v === undefined) return BLOOM_FILTER_DEFAULT_ITEMS;
  const n = Number(v.trim());
  if (v.trim() === '' || !Number.isInteger(n) || n <= 0 || n > 2147483647) {
    throw new InvalidOptionError(k, v, 'a positive integer', `table option '${k}' = '${v}' is not a positive integer`);
  }
  return n;
}

function fpp(options: CoreOptions, column: string): number {
  const k = `${PREFIX}${column}.fpp`;
  const v = options.get(k);
  if (v === undefined) return BLOOM_FILTER_DEFAULT_FPP;
  const n = Number(v.trim());
  if (v.trim() === '' || !(n > 0 && n < 1)) {
    throw new InvalidOptionError(k, v, 'a number in (0, 1)', `table option '${k}' = '${v}' must be in range (0, 1), as in Paimon`);
  }
  return n;
}
