/**
 * Reading one data file in the read schema (docs/format.md, "Schema evolution on read"): the file is read with the
 * schema it was written with (`_SCHEMA_ID`), each read field is matched **by field id** to the
 * file's field of the same id (whose name at that time is the physical column name), fields the
 * file does not have become null columns, and changed types are cast by Paimon's cast rules.
 */
import * as arrow from 'apache-arrow';
import type { FileIO } from '@tidemark/storage';
import {
  SEQUENCE_NUMBER_FIELD_NAME,
  VALUE_KIND_FIELD_NAME,
  conformToPaimonTypes,
  fieldById,
  keyValueFileFields,
  ParquetDataFile,
  readOrcFile,
  CorruptFileError,
  toArrowField,
  toArrowType,
  trimmedPrimaryKeys,
  type DataField,
  type IpcStreamSegment,
  type ParquetWorkerPool,
  type TableSchema,
} from '@tidemark/format';
import { castColumn } from '../cast/cast-column.js';
import { coreOptions } from '../core-options.js';
import { UnsupportedTableFeatureError } from '../scan/errors.js';
import type { Predicate } from '../predicate.js';
import { makeBatch, nullData } from './arrow-take.js';
import { DEFAULT_READ_AHEAD, readAhead } from './read-ahead.js';
import { orcPredicate } from './orc-predicate.js';
import type { ReadCache } from './read-cache.js';
import { PAGE_SELECT_MIN_ROWS, pageRowRanges, type RowRange } from './page-filter.js';
import { rowGroupFilter } from './row-group-filter.js';
import { sortedKeyRows } from './row-filter.js';

/** One batch of a data file, evolved to the read fields. */
export interface EvolvedBatch {
  /** Columns of the read fields, in read-field order and read types. */
  readonly batch: arrow.RecordBatch;
  /** `_SEQUENCE_NUMBER` (Int64) of primary-key files; null for append files. */
  readonly sequence: BigInt64Array | null;
  /** `_VALUE_KIND` (0 +I, 1 -U, 2 +U, 3 -D) of primary-key files; null for append files. */
  readonly valueKind: Int8Array | null;
}

/** Where a data file is and how it was written. */
export interface DataFileToRead {
  readonly path: string;
  readonly fileSize?: number;
  /** `_ROW_COUNT` of the manifest entry; the file must hold exactly that many rows. */
  readonly rowCount?: number;
  /** The schema of the file's `_SCHEMA_ID` (a promise lets a caller load it only when the file is opened). */
  readonly schema: TableSchema | Promise<TableSchema>;
  /** Resolves true when the file's index proves that no wanted row is in it: the file is not opened. */
  readonly ruledOut?: Promise<boolean>;
}

/** Options of {@link readDataFile} and {@link readDataFiles}. */
export interface ReadDataFileOptions {
  /** The file has the primary-key layout (`_KEY_*`, `_SEQUENCE_NUMBER`, `_VALUE_KIND`). */
  readonly keyValue: boolean;
  readonly batchSize?: number;
  /**
   * Skip row groups whose statistics prove that no row satisfies this predicate (it names read
   * fields). Rows of the groups that are read are returned unfiltered.
   */
  readonly rowFilter?: Predicate | null;
  /** Row groups decoded ahead of the consumer (default {@link DEFAULT_READ_AHEAD}); 1 = one at a time. */
  readonly readAhead?: number;
  /** Where parquet-wasm runs: a pool, or `false` for this thread (default: the shared pool). */
  readonly pool?: ParquetWorkerPool | false;
  /** Keeps opened Parquet files (their footers) between reads. */
  readonly cache?: ReadCache;
  /**
   * Key lookups: keep the decoded row groups in `cache` (bounded by `lookup.cache-max-memory-size`),
   * so that the next lookup of a key in them decodes nothing.
   */
  readonly keepDecoded?: boolean;
  /**
   * Primary-key files (sorted by key) read for these values of a single-column key (a read field):
   * in the pages a row range of a large group was narrowed to, the key column is decoded first and
   * the other columns only for the rows holding one of the values.
   */
  readonly keyProbe?: { readonly field: DataField; readonly values: readonly unknown[] };
}

/** A decoded batch of one of the files given to {@link readDataFiles}. */
export interface DataFileBatch<F extends DataFileToRead = DataFileToRead> {
  readonly file: F;
  readonly evolved: EvolvedBatch;
  /** Position in the file of the batch's first row (row groups skipped by statistics count too). */
  readonly firstRow: number;
}

/**
 * Streams a data file's rows as batches of `readFields` (Arrow schema = `toArrowSchema(readFields)`).
 *
 * @throws UnsupportedTableFeatureError for a data file format other than Parquet and ORC, or a type
 *   change that cannot be cast.
 */
export async function* readDataFile(
  io: FileIO,
  file: DataFileToRead,
  readFields: readonly DataField[],
  options: ReadDataFileOptions,
): AsyncGenerator<EvolvedBatch> {
  for await (const b of readDataFiles(io, [file], readFields, options)) yield b.evolved;
}

/**
 * Streams the batches of several data files, file after file and in row order, while the next
 * row groups (of this file or the following ones) are decoded on the worker pool: at most
 * `readAhead` decoded row groups wait for the consumer, so memory stays bounded however many
 * files there are. Footers are read ahead as far as `readAhead` files.
 */
export async function* readDataFiles<F extends DataFileToRead>(
  io: FileIO,
  files: Iterable<F>,
  readFields: readonly DataField[],
  options: ReadDataFileOptions,
): AsyncGenerator<DataFileBatch<F>> {
  const window = options.readAhead ?? DEFAULT_READ_AHEAD;
  for await (const unit of readAhead(decodeUnits(io, files, readFields, options, window), window)) {
    let firstRow = unit.firstRow;
    for (const evolved of unit.batches) {
      // A key probe returns separate stretches of the unit: each says where it starts.
      const at = (evolved as ProbedBatch).at;
      if (at !== undefined) firstRow = unit.firstRow + at;
      yield { file: unit.file, evolved, firstRow };
      firstRow += evolved.batch.numRows;
    }
  }
}

/** A decoded row group of {@link readDataFileSegments}: as IPC bytes, or as evolved batches. */
export interface DataFileSegment<F extends DataFileToRead = DataFileToRead> {
  readonly file: F;
  /** Position in the file of the group's first row. */
  readonly firstRow: number;
  /**
   * The group as the decode worker made it (the file's physical Arrow types, not evolved), for the
   * files `passIpc` chose when the stream is plain (`scanIpcStream`); null otherwise.
   */
  readonly ipc: IpcStreamSegment | null;
  /** The group's batches in the read fields (empty when {@link ipc} is set). */
  readonly batches: readonly EvolvedBatch[];
  /** The batches of {@link ipc} in the read fields: for a consumer that cannot take the bytes. */
  evolve(): EvolvedBatch[];
}

/**
 * {@link readDataFiles} a row group at a time, where the groups of the Parquet files `passIpc`
 * picks stay the IPC streams the decode workers made (when the pool has workers): a consumer
 * that writes rows unchanged (a compaction in the table's current schema) hands them to the
 * encode workers without this thread decoding them into Arrow, evolving and re-serialising them.
 */
export async function* readDataFileSegments<F extends DataFileToRead>(
  io: FileIO,
  files: Iterable<F>,
  readFields: readonly DataField[],
  options: ReadDataFileOptions & { readonly passIpc: (file: F) => boolean },
): AsyncGenerator<DataFileSegment<F>> {
  const window = options.readAhead ?? DEFAULT_READ_AHEAD;
  for await (const unit of readAhead(decodeUnits(io, files, readFields, options, window, options.passIpc), window)) {
    const segment = unit.segment;
    if (segment === undefined) {
      const batches = unit.batches;
      yield { file: unit.file, firstRow: unit.firstRow, ipc: null, batches, evolve: () => [...batches] };
    } else {
      yield { file: unit.file, firstRow: unit.firstRow, ipc: segment.ipc, batches: [], evolve: segment.evolve };
    }
  }
}

interface DecodedUnit<F> {
  readonly file: F;
  readonly firstRow: number;
  readonly batches: readonly EvolvedBatch[];
  /** Set instead of `batches` for a group passed on as IPC. */
  readonly segment?: { readonly ipc: IpcStreamSegment; readonly evolve: () => EvolvedBatch[] };
}

/** One task per row group to read, in file order; footers of the next files are opened ahead. */
async function* decodeUnits<F extends DataFileToRead>(
  io: FileIO,
  files: Iterable<F>,
  readFields: readonly DataField[],
  options: ReadDataFileOptions,
  window: number,
  passIpc?: (file: F) => boolean,
): AsyncGenerator<() => Promise<DecodedUnit<F>>> {
  const iter = files[Symbol.iterator]();
  const opening: { file: F; opened: Promise<OpenedFile> }[] = [];
  const fill = (): void => {
    while (opening.length < window) {
      const next = iter.next();
      if (next.done) return;
      const opened = openFile(io, next.value, readFields, options);
      opened.catch(() => undefined); // reported in order, when its turn comes
      opening.push({ file: next.value, opened });
    }
  };
  fill();
  for (let head = opening.shift(); head !== undefined; head = opening.shift()) {
    fill();
    let opened: OpenedFile;
    try {
      opened = keepingDecoded(await head.opened, head.file, readFields, options);
    } catch (err) {
      // Fail in order: after the units of the files before it.
      yield () => Promise.reject(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    const file = head.file;
    const pass = opened.decodeToIpc !== undefined && passIpc !== undefined && passIpc(file);
    for (const unit of opened.units) {
      if (pass && unit.rows === undefined) {
        yield () =>
          opened.decodeToIpc!(unit).then((decoded) =>
            'ipc' in decoded
              ? { file, firstRow: opened.firstRow(unit), batches: [], segment: decoded }
              : { file, firstRow: opened.firstRow(unit), batches: decoded.batches },
          );
      } else yield () => opened.decode(unit).then((batches) => ({ file, firstRow: opened.firstRow(unit), batches }));
    }
  }
}

/**
 * `opened` whose row groups, once decoded, stay in the read cache when the read is a key lookup
 * (a file never changes under its name; the key names how it was read).
 */
function keepingDecoded(
  opened: OpenedFile,
  file: DataFileToRead,
  readFields: readonly DataField[],
  options: ReadDataFileOptions,
): OpenedFile {
  const cache = options.cache;
  if (cache === undefined || options.keepDecoded !== true) return opened;
  const how = `${options.keyValue ? 'kv' : 'plain'}|${options.batchSize ?? ''}|${readShape(readFields)}`;
  return {
    units: opened.units,
    firstRow: (unit) => opened.firstRow(unit),
    // A key probe of narrowed pages returns the rows of its keys only: nothing to keep for others.
    decode: (unit) =>
      unit.rows !== undefined && options.keyProbe !== undefined
        ? opened.decode(unit)
        : cache.decoded(
            `${file.path}#${unit.group}${unit.rows === undefined ? '' : `:${unit.rows.start}-${unit.rows.end}`}#${how}`,
            () => opened.decode(unit),
            evolvedBytes,
          ),
  };
}

const shapes = new WeakMap<readonly DataField[], string>();

/** The read fields as a string: ids and types (what decoding a file into them depends on). */
function readShape(fields: readonly DataField[]): string {
  let shape = shapes.get(fields);
  if (shape === undefined) shapes.set(fields, (shape = JSON.stringify(fields.map((f) => [f.id, f.type]))));
  return shape;
}

function evolvedBytes(batches: readonly EvolvedBatch[]): number {
  let total = 0;
  const visit = (d: arrow.Data): void => {
    for (const b of [d.values, d.valueOffsets, d.nullBitmap] as Array<ArrayBufferView | undefined>) total += b?.byteLength ?? 0;
    for (const c of d.children) visit(c);
  };
  for (const b of batches) {
    for (const c of b.batch.data.children) visit(c);
    total += (b.sequence?.byteLength ?? 0) + (b.valueKind?.byteLength ?? 0);
  }
  return total;
}

/** A batch of a key probe: `at` rows after the first row of its unit. */
interface ProbedBatch extends EvolvedBatch {
  readonly at?: number;
}

/** A row group to read, or the rows of one (`rows`, from the group's first row) that its page index leaves. */
interface ReadUnit {
  readonly group: number;
  readonly rows?: RowRange;
}

interface OpenedFile {
  /** What to read (non-empty, not pruned), in file order. */
  readonly units: readonly ReadUnit[];
  /** Position in the file of a unit's first row. */
  firstRow(unit: ReadUnit): number;
  decode(unit: ReadUnit): Promise<EvolvedBatch[]>;
  /**
   * Parquet files: the group as the decode worker's IPC stream, with how to evolve it, when the
   * stream is plain and the pool has workers; else its evolved batches.
   */
  decodeToIpc?(
    unit: ReadUnit,
  ): Promise<{ readonly ipc: IpcStreamSegment; readonly evolve: () => EvolvedBatch[] } | { readonly batches: EvolvedBatch[] }>;
}

/** A file its index ruled out. */
const NOTHING_TO_READ: OpenedFile = { units: [], firstRow: () => 0, decode: () => Promise.resolve([]) };

async function openFile(
  io: FileIO,
  file: DataFileToRead,
  readFields: readonly DataField[],
  options: ReadDataFileOptions,
): Promise<OpenedFile> {
  if (file.ruledOut !== undefined && (await file.ruledOut)) return NOTHING_TO_READ;
  const schema = await file.schema;
  const format = dataFileFormat(file.path, coreOptions(schema).fileFormat);
  const layout = fileLayout(schema, readFields, options.keyValue);
  if (format === 'orc') return openOrc(io, file, layout, readFields, options);
  const open = (): Promise<ParquetDataFile> =>
    ParquetDataFile.open(io, file.path, {
      ...(file.fileSize !== undefined ? { fileSize: file.fileSize } : {}),
      ...(file.rowCount !== undefined ? { rowCount: file.rowCount } : {}),
    });
  // Data files never change under their name: a footer read once serves every later read.
  const data = await (options.cache ? options.cache.parquetFile(file.path, open) : open());
  const keep = options.rowFilter ? rowGroupFilter(options.rowFilter, readFields, layout.fileFields) : null;
  const units: ReadUnit[] = [];
  for (const [i, g] of data.rowGroups.entries()) {
    if (g.rows === 0 || (keep !== null && !keep(data.footer.rowGroups[i]!))) continue;
    // A large group: only the rows whose pages may hold what the filter wants.
    const ranges =
      options.rowFilter && g.rows >= PAGE_SELECT_MIN_ROWS
        ? await pageRowRanges(data, i, options.rowFilter, readFields, layout.fileFields)
        : null;
    if (ranges === null) units.push({ group: i });
    else for (const rows of ranges) units.push({ group: i, rows });
  }
  const decodeOptions = {
    columns: layout.physical,
    ...(options.batchSize !== undefined ? { batchSize: options.batchSize } : {}),
    ...(options.pool !== undefined ? { pool: options.pool } : {}),
  };
  return {
    units,
    firstRow: (unit) => data.rowGroups[unit.group]!.firstRow + (unit.rows?.start ?? 0),
    decode: async ({ group, rows }) => {
      const decodeRows = async (r: RowRange | undefined): Promise<EvolvedBatch[]> =>
        (await data.decode([group], r === undefined ? decodeOptions : { ...decodeOptions, rows: r })).map((raw) =>
          evolve(raw, file.path, layout, readFields, options.keyValue),
        );
      const probe = rows === undefined ? null : keyProbeOf(options, readFields, layout);
      if (probe === null) return decodeRows(rows);
      // The key column of the narrowed pages first, then every column of the rows holding a wanted
      // key; those columns' pages are read meanwhile (one round trip, not two, for a key that is there).
      data.prefetchPages(group, rows!, decodeOptions.columns).catch(() => undefined);
      const keys = await data.decode([group], { ...decodeOptions, columns: [probe.fileField.name], rows: rows! });
      const out: ProbedBatch[] = [];
      let offset = 0;
      for (const raw of keys) {
        const found = sortedKeyRows(conformToPaimonTypes(raw, [probe.fileField]), [probe.fileField], probe.fileField, probe.values) ?? [
          ...Array(raw.numRows).keys(),
        ];
        // One decode from the first found row to the last: the rows between (of other keys) are
        // dropped by the read's key filter, and each decode pays for the pages and dictionaries
        // again, so many keys in one page (an IN list) decode it once, not once per key.
        if (found.length > 0) {
          const start = rows!.start + offset + found[0]!;
          for (const b of await decodeRows({ start, end: rows!.start + offset + found[found.length - 1]! + 1 })) {
            out.push({ ...b, at: start - rows!.start });
          }
        }
        offset += raw.numRows;
      }
      return out;
    },
    decodeToIpc: async ({ group }) => {
      const evolveAll = (raws: readonly arrow.RecordBatch[]): EvolvedBatch[] =>
        raws.map((raw) => evolve(raw, file.path, layout, readFields, options.keyValue));
      const decoded = await data.decodeToIpc([group], decodeOptions);
      if (decoded === null) return { batches: evolveAll(await data.decode([group], decodeOptions)) };
      if ('batches' in decoded) return { batches: evolveAll(decoded.batches) };
      const ipc = decoded.segment;
      return { ipc, evolve: () => evolveAll(arrow.tableFromIPC(ipc.bytes).batches) };
    },
  };
}

/**
 * The key probe of a read of primary-key files, with the file's field of the key: null when the
 * read has none, or the file stores the key in another type (an evolved column, cast on read).
 */
function keyProbeOf(
  options: ReadDataFileOptions,
  readFields: readonly DataField[],
  layout: FileLayout,
): { fileField: DataField; values: readonly unknown[] } | null {
  const probe = options.keyProbe;
  if (probe === undefined || !options.keyValue) return null;
  const i = readFields.findIndex((f) => f.id === probe.field.id);
  const fileField = i < 0 ? undefined : layout.fileFields[i];
  if (fileField === undefined || JSON.stringify(fileField.type) !== JSON.stringify(probe.field.type)) return null;
  return { fileField, values: probe.values };
}

/** An ORC file is one unit, decoded on this thread (the worker pool runs parquet-wasm only). */
function openOrc(
  io: FileIO,
  file: DataFileToRead,
  layout: FileLayout,
  readFields: readonly DataField[],
  options: ReadDataFileOptions,
): OpenedFile {
  const predicate = options.rowFilter ? orcPredicate(options.rowFilter, readFields, layout.fileFields) : null;
  const readOptions = {
    columns: layout.physical,
    ...(predicate !== null ? { predicate } : {}),
    ...(file.fileSize !== undefined ? { fileSize: file.fileSize } : {}),
    ...(file.rowCount !== undefined ? { rowCount: file.rowCount } : {}),
    ...(options.batchSize !== undefined ? { batchSize: options.batchSize } : {}),
  };
  return {
    units: [{ group: 0 }],
    firstRow: () => 0,
    decode: async () => {
      const out: EvolvedBatch[] = [];
      for await (const raw of readOrcFile(io, file.path, readOptions)) {
        checkOrcFieldIds(raw, layout.conformFields, file.path);
        out.push(evolve(raw, file.path, layout, readFields, options.keyValue));
      }
      return out;
    },
  };
}

/** A decoded batch (physical types) in the read fields: matched by id, cast, missing fields null. */
function evolve(
  raw: arrow.RecordBatch,
  path: string,
  layout: FileLayout,
  readFields: readonly DataField[],
  keyValue: boolean,
): EvolvedBatch {
  const { readSchema, fileFields, conformFields } = layout;
  const batch = conformToPaimonTypes(raw, conformFields);
  const byName = new Map<string, arrow.Data>();
  batch.schema.fields.forEach((f, i) => byName.set(f.name, batch.data.children[i]!));
  const n = batch.numRows;
  const columns = readFields.map((readField, i) => {
    const fileField = fileFields[i];
    if (!fileField) return nullData(toArrowType(readField.type), n);
    const data = byName.get(fileField.name);
    if (!data) return nullData(toArrowType(readField.type), n);
    return castColumn(data, fileField.type, readField.type, `${path}: column '${fileField.name}'`);
  });
  let sequence: BigInt64Array | null = null;
  let valueKind: Int8Array | null = null;
  if (keyValue) {
    const seq = byName.get(SEQUENCE_NUMBER_FIELD_NAME);
    const kind = byName.get(VALUE_KIND_FIELD_NAME);
    if (!seq || !kind) {
      throw new UnsupportedTableFeatureError(`${path}: primary-key data file lacks _SEQUENCE_NUMBER/_VALUE_KIND`);
    }
    sequence = (seq.values as BigInt64Array).subarray(0, n);
    valueKind = (kind.values as Int8Array).subarray(0, n);
  }
  return { batch: makeBatch(readSchema, columns, n), sequence, valueKind };
}

/**
 * The format of a data file: its extension when it has a known one (a table's `file.format` may
 * have changed since the file was written), else the table's `file.format`.
 *
 * @throws UnsupportedTableFeatureError for a format tidemark cannot read (avro, lance, ...).
 */
export function dataFileFormat(path: string, tableFormat: string): 'parquet' | 'orc' {
  if (path.endsWith('.parquet')) return 'parquet';
  if (path.endsWith('.orc')) return 'orc';
  if (tableFormat === 'parquet' || tableFormat === 'orc') return tableFormat;
  throw new UnsupportedTableFeatureError(`${path}: data file format '${tableFormat}' is not supported (parquet and orc are)`);
}

/**
 * Java writes each column's Paimon field id as the ORC type attribute `paimon.id`. Columns are
 * matched by the names of the file's schema; a file whose ids disagree with them was not written
 * with that schema, and reading it by name would return another field's values.
 */
function checkOrcFieldIds(batch: arrow.RecordBatch, fields: readonly DataField[], path: string): void {
  for (const f of batch.schema.fields) {
    const id = f.metadata.get('paimon.id');
    if (id === undefined) continue;
    const expected = fields.find((d) => d.name === f.name)?.id;
    if (expected !== undefined && Number(id) !== expected) {
      throw new CorruptFileError(
        path,
        `ORC column '${f.name}' has paimon.id ${id}, but field '${f.name}' of the file's schema has id ${expected}`,
      );
    }
  }
}

/** How files of one schema are read into given read fields (the same for every such file). */
interface FileLayout {
  readonly readSchema: arrow.Schema;
  /** The file's field for each read field (by id), or undefined when the file lacks it. */
  readonly fileFields: readonly (DataField | undefined)[];
  /** Physical columns to read. */
  readonly physical: readonly string[];
  /** Paimon fields of the file's physical columns (for `conformToPaimonTypes`). */
  readonly conformFields: readonly DataField[];
}

/** Layouts by read fields, then by file schema (both compared by identity): computed once per read and schema, not per file. */
const layouts = new WeakMap<readonly DataField[], WeakMap<TableSchema, { kv?: FileLayout; plain?: FileLayout }>>();

function fileLayout(schema: TableSchema, readFields: readonly DataField[], keyValue: boolean): FileLayout {
  let bySchema = layouts.get(readFields);
  if (!bySchema) layouts.set(readFields, (bySchema = new WeakMap()));
  let cached = bySchema.get(schema);
  if (!cached) bySchema.set(schema, (cached = {}));
  const hit = keyValue ? cached.kv : cached.plain;
  if (hit) return hit;
  const readSchema = new arrow.Schema(readFields.map((f) => toArrowField(f)));
  const fileFields = readFields.map((f) => fieldById(schema, f.id));
  const physical: string[] = [];
  for (const f of fileFields) if (f && !physical.includes(f.name)) physical.push(f.name);
  if (keyValue) physical.push(SEQUENCE_NUMBER_FIELD_NAME, VALUE_KIND_FIELD_NAME);
  // A batch needs at least one physical column to know its row count.
  if (physical.length === 0 && schema.fields[0]) physical.push(schema.fields[0].name);
  const conformFields = keyValue
    ? keyValueFileFields(
        trimmedPrimaryKeys(schema).map((n) => schema.fields.find((f) => f.name === n)!),
        schema.fields,
      )
    : schema.fields;
  const layout: FileLayout = { readSchema, fileFields, physical, conformFields };
  if (keyValue) cached.kv = layout;
  else cached.plain = layout;
  return layout;
}
