/**
 * Parquet data-file reader: parquet-wasm's async `ParquetFile` over ranged reads of a
 * {@link FileIO}, handed to apache-arrow JS through the IPC stream format.
 *
 * The async API is used even for local files because the synchronous `readParquet` of
 * parquet-wasm 0.8 ignores the column projection and copies the whole file into wasm memory.
 */
import * as arrow from 'apache-arrow';
import { parquetMetadata, type FileMetaData } from 'hyparquet';
import * as pw from 'parquet-wasm';
import { InvalidRangeError, type FileIO } from '@tidemark/storage';

import { castData } from './arrow-cast.js';
import { toArrowField } from './arrow-types.js';
import { CorruptFileError, FormatError } from './errors.js';
import { scanIpcStream, type IpcStreamSegment } from './ipc-stream.js';
import { damageDetail, decodeParquetFooter, footerError, type ParquetFooter, type ParquetRowGroupInfo } from './parquet-footer.js';
import {
  decodeColumnIndex,
  decodeOffsetIndex,
  type ParquetColumnPages,
  type ParquetPageLocation,
  type ParquetPageStats,
} from './parquet-page-index.js';
import { sharedParquetWorkerPool, type ParquetWorkerPool } from './parquet-worker-pool.js';
import { decodeDictionaryPage, PageColumnRows, pageColumnKind, type PageColumn, type PageDictionary } from './parquet-page-decoder.js';
import { RangeBlob } from './range-blob.js';
import { guardWasmRead } from './wasm-trap-guard.js';
import type { DataField } from './types.js';

/**
 * Bytes read from the end of a data file up front: the footer (and all of a small file) in one
 * read instead of separate reads of its length, its metadata and each column chunk.
 */
const TAIL_PREFETCH_BYTES = 64 * 1024;

/** Options of the Parquet readers: columns, row groups and batch size. */
export interface ParquetReadOptions {
  /** Top-level physical column names to read (file order is kept); all columns when absent. */
  readonly columns?: readonly string[];
  /** Rows per yielded batch; defaults to the row count of each row group (one batch per group). */
  readonly batchSize?: number;
  /** Only these row groups (0-based); all when absent. */
  readonly rowGroups?: readonly number[];
  /**
   * Object size if already known (e.g. `_FILE_SIZE` from the manifest), saving one `stat`. The
   * file is then checked to have exactly this size: a truncated or extended file is refused as
   * corrupt before its bytes reach the decoder.
   */
  readonly fileSize?: number;
  /** Row count the file must hold (e.g. `_ROW_COUNT` from the manifest); checked against its footer and the decoded rows. */
  readonly rowCount?: number;
  /**
   * Row-group pruning: a group for which this returns false is not read (its statistics prove
   * that no row of it is wanted). Called with the group's footer entry and index.
   */
  readonly keepRowGroup?: (group: ParquetRowGroupInfo, index: number) => boolean;
  /** Where parquet-wasm runs; see {@link ParquetDecodeOptions.pool}. */
  readonly pool?: ParquetWorkerPool | false;
}

/**
 * Streams the record batches of a Parquet file with the file's physical Arrow types (apply
 * {@link conformToPaimonTypes} to get the shared Paimon mapping). Reads the footer and only the
 * column chunks of the projected columns; memory is bounded by one row group. Row groups are
 * decoded one after the other, on a worker of `options.pool` (default: the shared pool) or, with
 * `pool: false` or a pool of size 0, on this thread.
 *
 * @throws CorruptFileError when the bytes are not a readable Parquet file (truncated, bad footer,
 *   undecodable page); FormatError when a requested column or row group does not exist.
 */
export async function* readParquetFile(io: FileIO, path: string, options: ParquetReadOptions = {}): AsyncGenerator<arrow.RecordBatch> {
  const file = await ParquetDataFile.open(io, path, options);
  const groups = options.rowGroups ?? [...Array(file.rowGroups.length).keys()];
  for (const group of groups) {
    const info = file.rowGroups[group];
    if (info === undefined) {
      throw new FormatError(`${path}: row group ${group} does not exist (file has ${file.rowGroups.length})`);
    }
    if (info.rows === 0) continue;
    if (options.keepRowGroup && !options.keepRowGroup(file.footer.rowGroups[group]!, group)) continue;
    yield* await file.decode([group], options);
  }
}

/** One row group of a {@link ParquetDataFile}: its size and where its rows start in the file. */
export interface ParquetRowGroupExtent {
  readonly rows: number;
  /** Position of the group's first row in the file (deletion vectors count rows from 0). */
  readonly firstRow: number;
}

/** Options of {@link ParquetDataFile.decode}. */
export interface ParquetDecodeOptions {
  /**
   * Only these rows of the (one) row group decoded, `start` inclusive and `end` exclusive, counted
   * from the group's first row: with the file's offset index, only the pages holding them are
   * read and decoded.
   */
  readonly rows?: { readonly start: number; readonly end: number };
  /** Top-level physical column names to read (file order is kept); all columns when absent. */
  readonly columns?: readonly string[];
  /** Rows per batch; defaults to one batch per row group. */
  readonly batchSize?: number;
  /**
   * Worker pool that runs parquet-wasm; `false` (or a pool of size 0) decodes on this thread.
   * Default: the shared pool (`TIDEMARK_PARQUET_WORKERS`, else min(2, available parallelism)).
   */
  readonly pool?: ParquetWorkerPool | false;
  /**
   * With `rows` (up to 65,536 of them): decode the pages holding them on this thread, keeping the
   * chunks' decoded dictionaries on this object for later reads (default true). Columns or pages of a shape the
   * page decoder does not read (see `pageColumnKind`) go to parquet-wasm all the same.
   */
  readonly pageDecoder?: boolean;
}

/**
 * Ranges of a file closer than this are read as one: fewer requests, a few wasted bytes. Kept small
 * so that a projection does not read the unprojected columns between the chunks it needs.
 */
const COALESCE_GAP_BYTES = 64 * 1024;

/** Bytes of page spans an opened file keeps at most for later page reads ({@link SpanCache}). */
const KEPT_SPAN_BYTES = 2 * 1024 * 1024;

/**
 * Rows a read decodes at most on the calling thread with the page decoder (a few pages of a key
 * lookup); longer stretches go to parquet-wasm on the worker pool.
 */
const PAGE_DECODER_MAX_ROWS = 65_536;

/**
 * Bytes of decoded dictionaries an opened file keeps at most (see {@link ParquetDataFile.dictionaryPagesDecoded}):
 * the dictionaries of the value columns of two 1M-row groups (~1 MB each when they are full).
 */
const KEPT_DICTIONARY_BYTES = 8 * 1024 * 1024;

/** Byte spans of a file by position, least recently used out first beyond `maxBytes`. */
class SpanCache {
  private readonly spans = new Map<string, Uint8Array>();
  bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(start: number, end: number): Uint8Array | undefined {
    const key = `${start}+${end}`;
    const hit = this.spans.get(key);
    if (hit !== undefined) {
      this.spans.delete(key);
      this.spans.set(key, hit);
    }
    return hit;
  }

  put(start: number, bytes: Uint8Array): void {
    if (bytes.byteLength > this.maxBytes / 4) return;
    const key = `${start}+${start + bytes.byteLength}`;
    const old = this.spans.get(key);
    if (old !== undefined) this.bytes -= old.byteLength;
    this.spans.delete(key);
    this.spans.set(key, bytes);
    this.bytes += bytes.byteLength;
    for (const [k, v] of this.spans) {
      if (this.bytes <= this.maxBytes) break;
      this.spans.delete(k);
      this.bytes -= v.byteLength;
    }
  }
}

/**
 * An opened Parquet data file: its decoded footer (row groups with statistics, from one ranged
 * read of the tail) and the decoding of chosen row groups and columns, on a worker thread or on
 * this thread. Several {@link decode} calls may run at once (one per row group, say), which is
 * how readers use both cores on one file.
 */
export class ParquetDataFile {
  private decodedFooter: ParquetFooter | undefined;

  private constructor(
    private readonly io: FileIO,
    /** Where the file is (named in every error). */
    readonly path: string,
    private readonly blob: RangeBlob,
    /** hyparquet's parse of the footer (offsets, sizes, schema). */
    private readonly metadata: FileMetaData,
    /** The file's last bytes, ending with the footer and its trailer. */
    private readonly footerTail: Uint8Array,
    private readonly metadataLength: number,
    /** Rows and first-row position of each row group. */
    readonly rowGroups: readonly ParquetRowGroupExtent[],
    /** Top-level column names. */
    private readonly columnNames: ReadonlySet<string>,
  ) {}

  /**
   * The decoded footer with column-chunk statistics. Decoded on first use: a read that prunes
   * nothing never pays for the statistics.
   */
  get footer(): ParquetFooter {
    this.decodedFooter ??= decodeParquetFooter(this.path, this.footerTail, this.metadataLength);
    return this.decodedFooter;
  }

  /** Bytes this object keeps (the file's tail with the footer): what a cache of opened files counts. */
  get retainedBytes(): number {
    const tail = this.blob.tail;
    return tail.byteLength + (this.footerTail === tail ? 0 : this.footerTail.byteLength) + this.keptSpans.bytes + this.dictionaryBytes;
  }

  /**
   * Reads and parses the footer (usually from the one prefetched read of the file's tail).
   * @throws CorruptFileError for a size or row count that differs from `fileSize` / `rowCount`,
   *   or a footer that does not decode.
   */
  static async open(io: FileIO, path: string, options: Pick<ParquetReadOptions, 'fileSize' | 'rowCount'> = {}): Promise<ParquetDataFile> {
    const blob = await openChecked(io, path, options.fileSize);
    const tail = blob.tail;
    if (blob.size < 12 || tail.length < 12)
      throw new CorruptFileError(path, `cannot read Parquet footer: the file has only ${blob.size} bytes`);
    const view = new DataView(tail.buffer, tail.byteOffset, tail.byteLength);
    if (view.getUint32(tail.length - 4, true) !== 0x31524150) {
      throw new CorruptFileError(path, 'cannot read Parquet footer: the file does not end with the Parquet magic bytes');
    }
    const metadataLength = view.getUint32(tail.length - 8, true);
    if (metadataLength + 12 > blob.size) {
      throw new CorruptFileError(path, `cannot read Parquet footer: footer length ${metadataLength} exceeds the file size ${blob.size}`);
    }
    const footerTail = metadataLength + 8 > tail.length ? await blob.slice(blob.size - metadataLength - 8).bytes() : tail;
    let metadata: FileMetaData;
    let firstRow = 0;
    let rowGroups: Array<{ rows: number; firstRow: number }>;
    let names: Set<string>;
    // A damaged footer can decode into the wrong shapes (a number where a list belongs): whatever
    // fails while reading it is the footer's damage, reported as such.
    try {
      metadata = parquetMetadata(footerTail.subarray(footerTail.length - 8 - metadataLength));
      rowGroups = metadata.row_groups.map((g) => {
        const rows = Number(g.num_rows);
        const extent = { rows, firstRow };
        firstRow += rows;
        return extent;
      });
      names = topLevelNames(metadata);
    } catch (err) {
      throw footerError(path, err);
    }
    if (options.rowCount !== undefined && firstRow !== options.rowCount) {
      throw new CorruptFileError(path, `the file's footer holds ${firstRow} rows, but its manifest entry records ${options.rowCount}`);
    }
    return new ParquetDataFile(io, path, blob, metadata, footerTail, metadataLength, rowGroups, names);
  }

  /**
   * Decodes `groups` (in this order) into record batches with the file's physical Arrow types.
   * @throws CorruptFileError when a page does not decode or a group decodes to another row count
   *   than its footer records; FormatError for a column or row group the file does not have.
   */
  async decode(groups: readonly number[], options: ParquetDecodeOptions = {}): Promise<arrow.RecordBatch[]> {
    const expected = this.expectedRows(groups, options.rows);
    if (groups.length === 0 || expected === 0) return [];
    if (options.columns) this.checkColumns(options.columns);
    const pool = options.pool === false ? null : (options.pool ?? sharedParquetWorkerPool());
    const what = describeGroups(groups);
    if (options.rows !== undefined && options.pageDecoder !== false && options.rows.end - options.rows.start <= PAGE_DECODER_MAX_ROWS) {
      const batch = await this.decodePages(groups[0]!, options.rows, options.columns);
      if (batch !== null) return this.checkedRows([batch], what, expected);
    }
    if (pool === null || pool.size === 0) return this.checkedRows(await this.decodeHere(groups, options, what), what, expected);
    return this.batchesOf(await this.decodeOnPool(pool, groups, options, what), what, expected);
  }

  /**
   * {@link decode} on a worker of `options.pool` (default: the shared pool), returning the Arrow
   * IPC stream the worker made instead of record batches, for a caller that hands the rows on
   * unchanged (e.g. to an encode worker). Null when the stream is not plain (see
   * {@link scanIpcStream}: its bytes are decoded here then, with {@link decode}'s result in
   * `batches`), and when the pool has no workers.
   * @throws as {@link decode}.
   */
  async decodeToIpc(
    groups: readonly number[],
    options: ParquetDecodeOptions = {},
  ): Promise<{ readonly segment: IpcStreamSegment } | { readonly batches: arrow.RecordBatch[] } | null> {
    const expected = this.expectedRows(groups);
    const pool = options.pool === false ? null : (options.pool ?? sharedParquetWorkerPool());
    if (groups.length === 0 || expected === 0 || pool === null || pool.size === 0) return null;
    if (options.columns) this.checkColumns(options.columns);
    const what = describeGroups(groups);
    const ipc = await this.decodeOnPool(pool, groups, options, what);
    const segment = scanIpcStream(ipc);
    if (segment === null) {
      return { batches: this.batchesOf(ipc, what, expected) };
    }
    if (segment.rows !== expected) {
      throw new CorruptFileError(this.path, `${what} decoded to ${segment.rows} rows, but its footer records ${expected}`);
    }
    return { segment };
  }

  /** The record batches of a worker's IPC stream for `what`, which must hold `expected` rows. */
  private batchesOf(ipc: Uint8Array, what: string, expected: number): arrow.RecordBatch[] {
    let batches: arrow.RecordBatch[];
    try {
      batches = arrow.tableFromIPC(ipc).batches;
    } catch (err) {
      throw corrupt(this.path, `cannot decode ${what}`, err);
    }
    return this.checkedRows(batches, what, expected);
  }

  /** `batches`, after checking they hold the `expected` rows the footer records for `what`. */
  private checkedRows(batches: arrow.RecordBatch[], what: string, expected: number): arrow.RecordBatch[] {
    const decoded = batches.reduce((a, b) => a + b.numRows, 0);
    if (decoded !== expected) {
      throw new CorruptFileError(this.path, `${what} decoded to ${decoded} rows, but its footer records ${expected}`);
    }
    return batches;
  }

  private expectedRows(groups: readonly number[], rows?: { readonly start: number; readonly end: number }): number {
    let expected = 0;
    for (const g of groups) {
      const extent = this.rowGroups[g];
      if (extent === undefined) throw new FormatError(`${this.path}: row group ${g} does not exist (file has ${this.rowGroups.length})`);
      expected += extent.rows;
    }
    if (rows === undefined) return expected;
    if (
      groups.length !== 1 ||
      !Number.isInteger(rows.start) ||
      !Number.isInteger(rows.end) ||
      rows.start < 0 ||
      rows.end > expected ||
      rows.start > rows.end
    ) {
      throw new FormatError(`${this.path}: rows ${rows.start}..${rows.end} must lie in one row group of ${expected} rows`);
    }
    return rows.end - rows.start;
  }

  /**
   * The pages of column `column` (a top-level column with one leaf) in row group `group`: where
   * each is and, when the file has a column index, its bounds. Null when the file has no offset
   * index for the chunk. Read from the tail already held when it lies there (page indexes are
   * written right before the footer), else with ranged reads; kept for later calls.
   */
  columnPages(group: number, column: string): Promise<ParquetColumnPages | null> {
    const key = `${group}|${column}`;
    let pages = this.pageIndexes.get(key);
    if (pages === undefined) {
      pages = this.readColumnPages(group, column);
      pages.catch(() => this.pageIndexes.delete(key));
      this.pageIndexes.set(key, pages);
    }
    return pages;
  }

  private readonly pageIndexes = new Map<string, Promise<ParquetColumnPages | null>>();

  private async readColumnPages(group: number, column: string): Promise<ParquetColumnPages | null> {
    const rowGroup = this.metadata.row_groups[group];
    if (rowGroup === undefined)
      throw new FormatError(`${this.path}: row group ${group} does not exist (file has ${this.rowGroups.length})`);
    const chunks = rowGroup.columns.filter((c) => c.meta_data?.path_in_schema[0] === column);
    const chunk = chunks[0];
    const meta = chunk?.meta_data;
    if (chunks.length !== 1 || chunk === undefined || meta === undefined || meta.path_in_schema.length !== 1) return null;
    if (chunk.offset_index_offset === undefined || chunk.offset_index_length === undefined) return null;
    const element = this.metadata.schema.find((e, i) => i > 0 && e.name === column && !e.num_children);
    if (element === undefined) return null;
    const [offsetBytes, columnBytes] = await Promise.all([
      this.bytesAt(Number(chunk.offset_index_offset), chunk.offset_index_length),
      chunk.column_index_offset !== undefined && chunk.column_index_length !== undefined
        ? this.bytesAt(Number(chunk.column_index_offset), chunk.column_index_length)
        : Promise.resolve(null),
    ]);
    let pages: ParquetPageLocation[];
    let stats: ParquetPageStats[] | null;
    try {
      pages = decodeOffsetIndex(offsetBytes);
      stats = columnBytes === null ? null : decodeColumnIndex(columnBytes, element);
    } catch (err) {
      throw corrupt(this.path, `cannot decode the page index of column '${column}' in row group ${group}`, err);
    }
    if (stats !== null && stats.length !== pages.length) stats = null;
    const chunkStart = Number(meta.dictionary_page_offset ?? meta.data_page_offset);
    const firstPage = pages[0]?.offset ?? chunkStart;
    return {
      column,
      element,
      rows: this.rowGroups[group]!.rows,
      pages,
      stats,
      dictionary: firstPage > chunkStart ? { offset: chunkStart, size: firstPage - chunkStart } : null,
    };
  }

  /**
   * Rows `rows` of `columns` in row group `group`, decoded page by page on this thread (see
   * parquet-page-decoder.ts); null when a column has no offset index or a shape the page decoder
   * does not read, or a page is of a kind it does not read or does not decode: parquet-wasm
   * decodes them then (and names a damaged page in its error).
   */
  private async decodePages(
    group: number,
    rows: { readonly start: number; readonly end: number },
    columns: readonly string[] | undefined,
  ): Promise<arrow.RecordBatch | null> {
    const plan = await this.pagePlan(group, rows, columns);
    if (plan === null) return null;
    const schema = await this.physicalSchema();
    const bytes = await this.spanBytes(this.planSpans(group, plan));
    try {
      const data = await Promise.all(
        plan.map(async ({ column, pages, read }) => {
          const out = new PageColumnRows(column, rows.end - rows.start);
          const dictionary = async (): Promise<PageDictionary | null> => {
            const d = pages.dictionary;
            return d === null
              ? null
              : this.dictionary(
                  group,
                  column,
                  () => bytes.get(d.offset) ?? this.spanBytes([[d.offset, d.offset + d.size]]).then((m) => m.get(d.offset)!),
                );
          };
          for (const { page, from, to } of read) await out.addPage(bytes.get(page.offset)!, from, to, dictionary);
          return out.data();
        }),
      );
      const fields = plan.map((p) => p.column.field);
      const length = rows.end - rows.start;
      return new arrow.RecordBatch(
        new arrow.Schema(fields, schema.metadata),
        arrow.makeData({ type: new arrow.Struct(fields), length, nullCount: 0, children: data }),
      );
    } catch {
      // A page of a kind the page decoder does not read (UnsupportedPageError), or one it cannot
      // decode: parquet-wasm decodes the rows, or names the damage in its error.
      return null;
    }
  }

  /** What {@link decodePages} reads of each column: null when a column is not for the page decoder. */
  private async pagePlan(
    group: number,
    rows: { readonly start: number; readonly end: number },
    columns: readonly string[] | undefined,
  ): Promise<PagePlan | null> {
    const schema = await this.physicalSchema();
    const root = this.metadata.schema[0]!;
    const plan: PagePlan = [];
    for (const { chunk, meta } of this.projectedChunks(group, columns)) {
      const name = meta.path_in_schema[0]!;
      if (meta.path_in_schema.length !== 1 || chunk.offset_index_offset === undefined) return null;
      const field = schema.fields.find((f) => f.name === name);
      const pages = await this.columnPages(group, name);
      if (field === undefined || pages === null) return null;
      const kind = pageColumnKind(field, meta, pages.element);
      if (kind === null) return null;
      const leaf = { element: pages.element, children: [], count: 1, path: [name] };
      const column: PageColumn = {
        kind,
        field,
        meta,
        element: pages.element,
        schemaPath: [{ element: root, children: [leaf], count: 2, path: [] }, leaf],
        maxDefinition: pages.element.repetition_type === 'REQUIRED' ? 0 : 1,
      };
      const read: { page: ParquetPageLocation; from: number; to: number }[] = [];
      pages.pages.forEach((page, i) => {
        const next = pages.pages[i + 1]?.firstRow ?? pages.rows;
        if (page.firstRow < rows.end && next > rows.start) {
          read.push({ page, from: Math.max(rows.start, page.firstRow) - page.firstRow, to: Math.min(rows.end, next) - page.firstRow });
        }
      });
      plan.push({ column, pages, read });
    }
    return plan;
  }

  /** The spans of the pages of `plan`, and of the dictionaries not decoded yet. */
  private planSpans(group: number, plan: PagePlan): [number, number][] {
    const spans: [number, number][] = [];
    for (const { column, pages, read } of plan) {
      for (const { page } of read) spans.push([page.offset, page.offset + page.size]);
      const d = pages.dictionary;
      if (d !== null && !this.dictionaries.has(dictionaryKey(group, column))) spans.push([d.offset, d.offset + d.size]);
    }
    return spans;
  }

  /**
   * The decoded dictionary of `column` in row group `group`, from `bytes` (its page) the first
   * time; kept while the file's kept dictionaries stay within {@link KEPT_DICTIONARY_BYTES}.
   */
  private dictionary(group: number, column: PageColumn, bytes: () => Uint8Array | Promise<Uint8Array>): Promise<PageDictionary> {
    const key = dictionaryKey(group, column);
    let decoded = this.dictionaries.get(key);
    if (decoded === undefined) {
      decoded = Promise.resolve(bytes()).then((b) => decodeDictionaryPage(column, b));
      this.dictionaryPagesDecoded++;
      this.dictionaries.set(key, decoded);
      decoded.then(
        (d) => {
          if (this.dictionaries.get(key) !== decoded) return;
          if (this.dictionaryBytes + d.byteLength > KEPT_DICTIONARY_BYTES) this.dictionaries.delete(key);
          else this.dictionaryBytes += d.byteLength;
        },
        () => this.dictionaries.delete(key),
      );
    }
    return decoded;
  }

  /** Decoded dictionaries by row group and column (see {@link dictionary}). */
  private readonly dictionaries = new Map<string, Promise<PageDictionary>>();
  private dictionaryBytes = 0;

  /**
   * Dictionary pages this object has decoded: a key lookup in a column chunk whose dictionary an
   * earlier lookup decoded decodes none.
   */
  dictionaryPagesDecoded = 0;

  private schemaOnce: Promise<arrow.Schema> | undefined;

  /** {@link arrowSchema}, computed once. */
  private physicalSchema(): Promise<arrow.Schema> {
    this.schemaOnce ??= this.arrowSchema();
    this.schemaOnce.catch(() => (this.schemaOnce = undefined));
    return this.schemaOnce;
  }

  /**
   * The bytes of each span `[start, end)` by its start: kept spans from memory, spans being read
   * (a prefetch) from that read, the others with coalesced ranged reads (and kept for later page reads).
   */
  private async spanBytes(spans: readonly [number, number][]): Promise<Map<number, Uint8Array>> {
    const out = new Map<number, Uint8Array>();
    const missing: [number, number][] = [];
    const waits: Promise<unknown>[] = [];
    for (const [a, b] of spans) {
      const kept = this.keptSpans.get(a, b);
      const reading = kept === undefined ? this.spansReading.get(`${a}+${b}`) : undefined;
      if (kept !== undefined) out.set(a, kept);
      else if (reading !== undefined) waits.push(reading.then((bytes) => out.set(a, bytes)));
      else if (!missing.some(([x, y]) => x === a && y === b)) missing.push([a, b]);
    }
    if (missing.length > 0) {
      const read = this.readCoalesced(missing.map(([a, b]) => [a, b]));
      for (const [a, b] of missing) {
        const key = `${a}+${b}`;
        const bytes = read.then((ranges) => {
          const from = ranges.find((r) => r.start <= a && r.start + r.bytes.length >= b);
          if (from === undefined) throw new CorruptFileError(this.path, `bytes ${a}..${b} could not be read`);
          const span = from.bytes.slice(a - from.start, b - from.start);
          this.keptSpans.put(a, span);
          return span;
        });
        this.spansReading.set(key, bytes);
        const done = (): void => {
          if (this.spansReading.get(key) === bytes) this.spansReading.delete(key);
        };
        bytes.then(done, done);
        waits.push(bytes.then((span) => out.set(a, span)));
      }
    }
    await Promise.all(waits);
    return out;
  }

  /** Spans being read now, by `start+end` (see {@link spanBytes}). */
  private readonly spansReading = new Map<string, Promise<Uint8Array>>();

  /**
   * Starts reading the pages of `columns` that hold rows `rows` of row group `group` (and the
   * dictionaries not decoded yet), for a {@link decode} of some of those rows soon after: a key
   * lookup reads them while it searches the key column, one round trip instead of two. Nothing
   * when the page decoder would not read the rows.
   */
  async prefetchPages(
    group: number,
    rows: { readonly start: number; readonly end: number },
    columns: readonly string[] | undefined,
  ): Promise<void> {
    if (rows.end - rows.start > PAGE_DECODER_MAX_ROWS) return;
    const plan = await this.pagePlan(group, rows, columns);
    if (plan !== null) await this.spanBytes(this.planSpans(group, plan));
  }

  /** `length` bytes at `offset`: from the tail held when they lie in it, else one ranged read. */
  private async bytesAt(offset: number, length: number): Promise<Uint8Array> {
    const tail = this.blob.tail;
    const tailStart = this.blob.size - tail.length;
    if (offset >= tailStart && offset + length <= this.blob.size) return tail.subarray(offset - tailStart, offset - tailStart + length);
    return this.io.readRange(this.path, offset, length);
  }

  private async decodeOnPool(
    pool: ParquetWorkerPool,
    groups: readonly number[],
    options: ParquetDecodeOptions,
    what: string,
  ): Promise<Uint8Array> {
    return pool.decodeIpc(
      {
        path: this.path,
        size: this.blob.size,
        ranges:
          options.rows === undefined
            ? await this.rangesFor(groups, options.columns)
            : await this.pageRangesFor(groups[0]!, options.rows, options.columns),
        rowGroups: groups,
        ...(options.rows !== undefined ? { offset: options.rows.start, limit: options.rows.end - options.rows.start } : {}),
        ...(options.columns ? { columns: options.columns } : {}),
        batchSize:
          options.batchSize ??
          (options.rows !== undefined
            ? Math.max(1, options.rows.end - options.rows.start)
            : Math.max(1, ...groups.map((g) => this.rowGroups[g]!.rows))),
        // Bytes the decoder wants beyond the ranges given (a small chunk read whole): kept too.
        readRange: async (start, length) => {
          const kept = this.keptSpans.get(start, start + length);
          if (kept !== undefined) return new Uint8Array(kept);
          const bytes = await this.io.readRange(this.path, start, length);
          if (options.rows !== undefined) this.keptSpans.put(start, bytes.slice());
          return bytes;
        },
      },
      (detail, cause) => corrupt(this.path, `cannot decode ${what}`, Object.assign(new Error(detail), cause ? { cause } : {})),
    );
  }

  private checkColumns(columns: readonly string[]): void {
    for (const c of columns) {
      if (!this.columnNames.has(c)) {
        throw new FormatError(`${this.path}: Column ${c} not found (requested columns must be physical column names of the file)`);
      }
    }
  }

  /**
   * Where the file's tail starts, and the ranges list a decode starts from: the tail. The tail is
   * kept for later decodes of this file, so the worker gets a copy (a real one: `Buffer#slice`
   * would return a view that the transfer detaches).
   */
  private tailRange(): { tailStart: number; ranges: { start: number; bytes: Uint8Array }[] } {
    const tail = this.blob.tail;
    const tailStart = this.blob.size - tail.length;
    return { tailStart, ranges: [{ start: tailStart, bytes: new Uint8Array(tail) }] };
  }

  /** The column chunks of row group `group` that `columns` (all when undefined) project, with their metadata. */
  private *projectedChunks(group: number, columns: readonly string[] | undefined) {
    const wanted = columns ? new Set(columns) : null;
    for (const chunk of this.metadata.row_groups[group]?.columns ?? []) {
      const meta = chunk.meta_data;
      if (meta && !(wanted && !wanted.has(meta.path_in_schema[0]!))) yield { chunk, meta };
    }
  }

  /** The tail plus the column chunks of `groups` × `columns`, coalesced and read in parallel. */
  private async rangesFor(
    groups: readonly number[],
    columns: readonly string[] | undefined,
  ): Promise<{ start: number; bytes: Uint8Array }[]> {
    const { tailStart, ranges } = this.tailRange();
    if (tailStart === 0) return ranges;
    const spans: [number, number][] = [];
    for (const g of groups) {
      for (const { meta: m } of this.projectedChunks(g, columns)) {
        const start = Number(m.dictionary_page_offset ?? m.data_page_offset);
        const end = Math.min(start + Number(m.total_compressed_size), tailStart);
        if (end > start) spans.push([start, end]);
      }
    }
    ranges.push(...(await this.readCoalesced(spans)));
    return ranges;
  }

  /**
   * The tail plus, for each projected column of `group`, the dictionary page and the pages holding
   * `rows` (by the offset index; a chunk without one is taken whole), coalesced and read in parallel.
   */
  private async pageRangesFor(
    group: number,
    rows: { readonly start: number; readonly end: number },
    columns: readonly string[] | undefined,
  ): Promise<{ start: number; bytes: Uint8Array }[]> {
    const { tailStart, ranges } = this.tailRange();
    if (tailStart === 0) return ranges;
    const spans: [number, number][] = [];
    const add = (start: number, end: number): void => {
      const to = Math.min(end, tailStart);
      if (to > start) spans.push([start, to]);
    };
    for (const { chunk, meta: m } of this.projectedChunks(group, columns)) {
      const chunkStart = Number(m.dictionary_page_offset ?? m.data_page_offset);
      const pages =
        m.path_in_schema.length === 1 && chunk.offset_index_offset !== undefined
          ? await this.columnPages(group, m.path_in_schema[0]!)
          : null;
      // A small chunk (a constant or low-cardinality column) is taken whole, as the decoder reads it.
      if (pages === null || pages.pages.length === 0 || Number(m.total_compressed_size) <= COALESCE_GAP_BYTES) {
        add(chunkStart, chunkStart + Number(m.total_compressed_size));
        continue;
      }
      if (pages.dictionary !== null) add(pages.dictionary.offset, pages.dictionary.offset + pages.dictionary.size);
      pages.pages.forEach((p, i) => {
        const next = pages.pages[i + 1]?.firstRow ?? pages.rows;
        if (p.firstRow < rows.end && next > rows.start) add(p.offset, p.offset + p.size);
      });
    }
    // Spans read before (a dictionary page, the key page a probe just read) come from memory.
    const missing: [number, number][] = [];
    for (const [a, b] of spans) {
      const kept = this.keptSpans.get(a, b);
      // A copy: the worker takes (detaches) the buffers it is given.
      if (kept !== undefined) ranges.push({ start: a, bytes: new Uint8Array(kept) });
      else missing.push([a, b]);
    }
    const read = await this.readCoalesced(missing);
    for (const [a, b] of missing) {
      const from = read.find((r) => r.start <= a && r.start + r.bytes.length >= b);
      if (from !== undefined) this.keptSpans.put(a, from.bytes.slice(a - from.start, b - from.start));
    }
    ranges.push(...read);
    // Kept spans and fresh reads that touch are one range: the decoder reads a small chunk whole
    // (its dictionary and pages at once) and finds it only within one range.
    return joinTouching(ranges);
  }

  /**
   * Page spans of this file that page reads fetched, kept for later ones (bounded): a key lookup
   * decodes the key page twice (to find the row, then the row's columns) and every lookup in a
   * column chunk reads its dictionary page.
   */
  private readonly keptSpans = new SpanCache(KEPT_SPAN_BYTES);

  /** The byte spans `[start, end)` read with ranged reads in parallel, those closer than {@link COALESCE_GAP_BYTES} as one. */
  private async readCoalesced(spans: [number, number][]): Promise<{ start: number; bytes: Uint8Array }[]> {
    spans.sort((a, b) => a[0] - b[0]);
    const merged: [number, number][] = [];
    for (const s of spans) {
      const last = merged[merged.length - 1];
      if (last && s[0] <= last[1] + COALESCE_GAP_BYTES) last[1] = Math.max(last[1], s[1]);
      else merged.push([s[0], s[1]]);
    }
    const read = await Promise.all(merged.map(([a, b]) => this.io.readRange(this.path, a, b - a)));
    return read.map((bytes, i) => ({ start: merged[i]![0], bytes }));
  }

  /**
   * The file's physical Arrow schema, as {@link decode}'s batches have it, from the footer: what a
   * file without rows still tells (e.g. the columns of an empty query result).
   * @throws CorruptFileError when the footer does not decode.
   */
  async arrowSchema(): Promise<arrow.Schema> {
    const file = await this.openWasm();
    try {
      return arrow.tableFromIPC(file.schema().intoIPCStream()).schema;
    } catch (err) {
      throw corrupt(this.path, 'cannot read the Arrow schema of the Parquet footer', err);
    } finally {
      file.free();
    }
  }

  private async openWasm(): Promise<pw.ParquetFile> {
    try {
      return await guardWasmRead(this.path, () => pw.ParquetFile.fromFile(this.blob as unknown as Blob));
    } catch (err) {
      throw corrupt(this.path, 'cannot read Parquet footer', err);
    }
  }

  private async decodeHere(groups: readonly number[], options: ParquetDecodeOptions, what: string): Promise<arrow.RecordBatch[]> {
    const file = await this.openWasm();
    try {
      const table = await guardWasmRead(this.path, () =>
        file.read({
          rowGroups: [...groups],
          batchSize: options.batchSize ?? Math.max(1, ...groups.map((g) => this.rowGroups[g]!.rows)),
          ...(options.columns ? { columns: [...options.columns] } : {}),
          ...(options.rows !== undefined ? { offset: options.rows.start, limit: options.rows.end - options.rows.start } : {}),
        }),
      );
      return arrow.tableFromIPC(table.intoIPCStream()).batches;
    } catch (err) {
      throw corrupt(this.path, `cannot decode ${what}`, err);
    } finally {
      // After a failed or trapped read the handle may still be borrowed by a future that will never
      // finish; freeing it then throws, and that must not replace the error that names the file.
      try {
        file.free();
      } catch {
        /* leaked, not reused */
      }
    }
  }
}

/** `ranges` with those that overlap or touch joined into one (copied into a new buffer). */
function joinTouching(ranges: { start: number; bytes: Uint8Array }[]): { start: number; bytes: Uint8Array }[] {
  const sorted = [...ranges].sort((a, b) => a.start - b.start);
  const out: { start: number; parts: { start: number; bytes: Uint8Array }[]; end: number }[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && r.start <= last.end) {
      last.parts.push(r);
      last.end = Math.max(last.end, r.start + r.bytes.length);
    } else out.push({ start: r.start, parts: [r], end: r.start + r.bytes.length });
  }
  return out.map(({ start, parts, end }) => {
    if (parts.length === 1) return parts[0]!;
    const bytes = new Uint8Array(end - start);
    for (const p of parts) bytes.set(p.bytes, p.start - start);
    return { start, bytes };
  });
}

/** Per column to decode by pages: the column, its pages, and which rows of which pages. */
type PagePlan = { column: PageColumn; pages: ParquetColumnPages; read: { page: ParquetPageLocation; from: number; to: number }[] }[];

function dictionaryKey(group: number, column: PageColumn): string {
  return `${group}|${column.meta.path_in_schema[0]}`;
}

function describeGroups(groups: readonly number[]): string {
  return groups.length === 1 ? `row group ${groups[0]}` : `row groups ${groups.join(', ')}`;
}

/** Names of the root's children in a flattened Parquet schema (nested children skipped). */
function topLevelNames(metadata: FileMetaData): Set<string> {
  const names = new Set<string>();
  const schema = metadata.schema;
  let i = 1;
  const skip = (): void => {
    const e = schema[i++];
    // A damaged num_children would otherwise walk billions of absent elements.
    if (e === undefined) throw new Error(`the schema lists ${schema.length} elements but its elements announce more children`);
    for (let k = 0; k < (e.num_children ?? 0); k++) skip();
  };
  for (let k = 0; k < (schema[0]?.num_children ?? 0); k++) {
    const e = schema[i];
    if (e) names.add(e.name);
    skip();
  }
  return names;
}

/**
 * Opens the file for parquet-wasm. With a known size, checks that the file really has it (the
 * prefetched tail is complete and ends with the Parquet magic) and reports a mismatch by size.
 */
async function openChecked(io: FileIO, path: string, fileSize: number | undefined): Promise<RangeBlob> {
  let blob: RangeBlob;
  try {
    blob = await RangeBlob.open(io, path, fileSize, TAIL_PREFETCH_BYTES);
  } catch (err) {
    if (fileSize === undefined || !(err instanceof InvalidRangeError)) throw err;
    throw await sizeMismatch(io, path, fileSize, err);
  }
  if (fileSize === undefined) return blob;
  const tail = blob.tail;
  const complete = tail.length === Math.min(fileSize, TAIL_PREFETCH_BYTES);
  const magic =
    tail.length >= 4 &&
    tail[tail.length - 4] === 0x50 &&
    tail[tail.length - 3] === 0x41 &&
    tail[tail.length - 2] === 0x52 &&
    tail[tail.length - 1] === 0x31;
  if (complete && magic) return blob;
  if (!complete) throw await sizeMismatch(io, path, fileSize);
  const actual = (await io.stat(path)).size;
  if (actual !== fileSize) throw await sizeMismatch(io, path, fileSize);
  throw new CorruptFileError(path, 'the file does not end with the Parquet magic bytes');
}

async function sizeMismatch(io: FileIO, path: string, fileSize: number, cause?: unknown): Promise<CorruptFileError> {
  const actual = await io.stat(path).then(
    (s) => `${s.size} bytes`,
    () => 'unreadable',
  );
  return new CorruptFileError(path, `the file is ${actual}, but its manifest entry records ${fileSize} bytes (truncated or replaced?)`, {
    cause,
  });
}

/**
 * Re-types a batch read from a data file to the shared Paimon → Arrow mapping, using the Paimon
 * fields the file was written with (its `_SCHEMA_ID` schema, or `keyValueFileFields(...)` for
 * primary-key files). Columns are matched by physical name; every field gets `PARQUET:field_id`
 * and Paimon nullability. Buffers are shared with the input where the representation is equal.
 */
export function conformToPaimonTypes(batch: arrow.RecordBatch, fileFields: readonly DataField[]): arrow.RecordBatch {
  const byName = arrowFieldsByName(fileFields);
  const fields: arrow.Field[] = [];
  const children: arrow.Data[] = [];
  batch.schema.fields.forEach((physical, i) => {
    const target = byName.get(physical.name);
    if (!target) {
      throw new FormatError(`column '${physical.name}' of the data file is not a field of its schema`);
    }
    fields.push(target);
    children.push(castData(batch.data.children[i]!, target.type, physical.name));
  });
  const schema = new arrow.Schema(fields);
  const data = arrow.makeData({ type: new arrow.Struct(fields), length: batch.numRows, nullCount: 0, children });
  return new arrow.RecordBatch(schema, data);
}

/** Arrow fields of a file's Paimon fields by name; cached per fields array (callers reuse it for every batch). */
const arrowFieldCache = new WeakMap<readonly DataField[], Map<string, arrow.Field>>();

function arrowFieldsByName(fileFields: readonly DataField[]): Map<string, arrow.Field> {
  let byName = arrowFieldCache.get(fileFields);
  if (!byName) {
    byName = new Map(fileFields.map((f) => [f.name, toArrowField(f)]));
    arrowFieldCache.set(fileFields, byName);
  }
  return byName;
}

function corrupt(path: string, what: string, err: unknown): Error {
  if (err instanceof CorruptFileError && err.path === path) return err;
  const detail = err instanceof Error ? err.message : String(err);
  if (/Column .* not found/i.test(detail)) {
    return new FormatError(`${path}: ${detail} (requested columns must be physical column names of the file)`, {
      cause: err,
    });
  }
  return new CorruptFileError(path, `${what}: ${damageDetail(err)}`, { cause: err });
}
