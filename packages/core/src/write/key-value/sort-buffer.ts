/**
 * The write buffer of a merge-tree writer, sorted and merged on typed arrays (Paimon's
 * `BinaryInMemorySortBuffer` with its normalized keys, then the merge function per key): records
 * stay in their Arrow chunks; each gets its normalized key words (normalized-key.ts), a stable
 * LSD radix sort orders the record numbers by them (ties keep arrival order, which is sequence
 * order), and the merge walks the sorted numbers key by key. A key with one record, and every key
 * of the deduplicate and first-row engines, is merged by choosing a record number; only keys with
 * several records under partial-update or aggregation go through {@link KeyMerger} with record
 * objects. The merged rows are gathered back into Arrow columns with {@link takeChunks}.
 *
 * Sequence numbers are given at the flush in arrival order: record `r` has `firstSequence + r`.
 */
import type * as arrow from 'apache-arrow';
import { toArrowType, type DataField, type DataType } from '@tidemark/format';
import { buildAggregatedColumn, chunkedAggregationInput } from '../../read/aggregated-columns.js';
import type { AggregatedCell } from '../../read/aggregate-functions.js';
import { nullData, takeChunks } from '../../read/arrow-take.js';
import { isRetraction, KeyMerger, type KeyValueRecord, type MergeEngineOptions, type MergedRow } from '../../read/merge-engine.js';
import type { KeyValueColumns } from './key-value.js';
import { NormalizedKeyLayout } from './normalized-key.js';

/** Below this many records the buffer sorts by insertion, above by radix. */
const INSERTION_SORT_MAX = 32;

/** Records of one (partition, bucket) written since the last flush, chunk by chunk. */
export class KeyValueSortBuffer {
  /** `chunks[column][chunk]`: the values of `fields[column]`. */
  readonly chunks: arrow.Data[][];
  private readonly kindChunks: Int8Array[] = [];
  private readonly rowCounts: number[] = [];
  private count = 0;
  private readonly layout: NormalizedKeyLayout;

  /**
   * @param fields the columns held (the table's, in schema order)
   * @param keyFields trimmed primary-key fields
   * @param sequenceFields `sequence.field` columns
   * @param sequenceDescending `sequence.field.sort-order` = descending
   */
  constructor(
    readonly fields: readonly DataField[],
    keyFields: readonly DataField[],
    sequenceFields: readonly DataField[] = [],
    sequenceDescending = false,
  ) {
    this.chunks = fields.map(() => []);
    this.layout = new NormalizedKeyLayout(fields, keyFields, sequenceFields, sequenceDescending);
  }

  /** Records held. */
  get size(): number {
    return this.count;
  }

  /** Adds a chunk: `columns` in {@link fields} order and one row kind per row. */
  add(columns: readonly arrow.Data[], kinds: Int8Array): void {
    if (kinds.length === 0) return;
    columns.forEach((c, i) => this.chunks[i]!.push(c));
    this.kindChunks.push(kinds);
    this.rowCounts.push(kinds.length);
    this.count += kinds.length;
  }

  /** Sorts the records by key, `sequence.field` values, then arrival. */
  sort(firstSequence: bigint): SortedKeyValues {
    const n = this.count;
    const stride = this.layout.stride;
    const words = new Uint32Array(n * stride);
    this.layout.encode(this.chunks, this.rowCounts, words);
    const chunkOf = new Uint32Array(n);
    const rowOf = new Uint32Array(n);
    const kinds = new Int8Array(n);
    let base = 0;
    for (let c = 0; c < this.rowCounts.length; c++) {
      const rows = this.rowCounts[c]!;
      chunkOf.fill(c, base, base + rows);
      for (let r = 0; r < rows; r++) rowOf[base + r] = r;
      kinds.set(this.kindChunks[c]!, base);
      base += rows;
    }
    const order = sortByWords(words, stride, n);
    const sorted = new SortedKeyValues(this.fields, this.chunks, this.layout, words, chunkOf, rowOf, kinds, order, firstSequence);
    sorted.resolveTies();
    return sorted;
  }
}

/** The records of a {@link KeyValueSortBuffer} in key order. */
export class SortedKeyValues {
  private readonly types: DataType[];
  private readonly arrowTypes: arrow.DataType[];

  constructor(
    readonly fields: readonly DataField[],
    private readonly chunks: readonly (readonly arrow.Data[])[],
    private readonly layout: NormalizedKeyLayout,
    private readonly words: Uint32Array,
    private readonly chunkOf: Uint32Array,
    private readonly rowOf: Uint32Array,
    private readonly kindOf: Int8Array,
    /** Record numbers in key order. */
    readonly order: Uint32Array,
    private readonly firstSequence: bigint,
  ) {
    this.types = fields.map((f) => f.type);
    this.arrowTypes = fields.map((f) => toArrowType(f.type));
  }

  get length(): number {
    return this.order.length;
  }

  /**
   * Orders the runs of records whose words tie where a string or binary field leaves the order
   * open, by the full values (then arrival).
   */
  resolveTies(): void {
    const { layout, words, order } = this;
    if (layout.allDetermined) return;
    const stride = layout.stride;
    const open = layout.determinedWords;
    let start = 0;
    while (start < order.length) {
      let end = start + 1;
      while (end < order.length && sameWords(words, stride, order[start]!, order[end]!, open)) end++;
      if (end - start > 1) {
        const run = Array.from(order.subarray(start, end));
        run.sort((a, b) => layout.compare(words, this.chunks, this.chunkOf, this.rowOf, a, b, false) || a - b);
        order.set(run, start);
      }
      start = end;
    }
  }

  /** Records `a` and `b` (record numbers) have the same key. */
  sameKey(a: number, b: number): boolean {
    const { layout, words } = this;
    if (!sameWords(words, layout.stride, a, b, layout.keyWords)) return false;
    return layout.keyDetermined || layout.compare(words, this.chunks, this.chunkOf, this.rowOf, a, b, true) === 0;
  }

  /** The records in key order, unmerged, rows [start, end) of the order (a changelog). */
  slice(start: number, end: number): KeyValueColumns {
    const records = this.order.subarray(start, end);
    return {
      columns: this.gather(records),
      sequence: this.sequencesOf(records),
      kinds: this.kindsOf(records),
    };
  }

  /**
   * Merges the records of each key as the table's merge engine does (Java's
   * `MergeFunction.getResult()`, a -D result kept: what a writer stores).
   */
  merge(options: MergeEngineOptions): MergedBuffer {
    const n = this.order.length;
    const picked = new Uint32Array(n);
    const mergedAt = new Int32Array(n).fill(-1);
    const mergedRows: MergedRow[] = [];
    let out = 0;
    const needsMerger = options.engine === 'partial-update' || options.engine === 'aggregation';
    const input = needsMerger ? chunkedAggregationInput(this.chunks, this.types) : null;
    const merger = input ? new KeyMerger(options, { names: this.fields.map((f) => f.name), types: this.types, input }) : null;
    const order = this.order;
    let start = 0;
    while (start < n) {
      let end = start + 1;
      while (end < n && this.sameKey(order[start]!, order[end]!)) end++;
      if (end - start === 1 || merger === null) {
        const r = this.pick(options, start, end);
        if (r >= 0) picked[out++] = r;
      } else {
        const merged = merger.merge(this.records(start, end), 0, end - start);
        if (merged !== null) {
          picked[out] = order[end - 1]!;
          mergedAt[out++] = mergedRows.length;
          mergedRows.push(merged);
        }
      }
      start = end;
    }
    return new MergedBuffer(this, picked.subarray(0, out), mergedAt.subarray(0, out), mergedRows, input);
  }

  /**
   * The record a key keeps without merging values (positions [start, end) of the order): its
   * only record, else the latest (deduplicate) or the first (first-row) that is not a retraction
   * skipped by `ignore-delete`; -1 when none is left. As {@link KeyMerger.merge} decides.
   */
  private pick(options: MergeEngineOptions, start: number, end: number): number {
    const { order, kindOf } = this;
    const ignoreDelete = options.ignoreDelete;
    if (end - start === 1) return ignoreDelete && isRetraction(kindOf[order[start]!]!) ? -1 : order[start]!;
    if (options.engine === 'first-row') {
      for (let i = start; i < end; i++) if (!isRetraction(kindOf[order[i]!]!)) return order[i]!;
      return -1;
    }
    for (let i = end - 1; i >= start; i--) if (!ignoreDelete || !isRetraction(kindOf[order[i]!]!)) return order[i]!;
    return -1;
  }

  /** Record objects of positions [start, end) of the order, for {@link KeyMerger}. */
  private records(start: number, end: number): KeyValueRecord[] {
    const out: KeyValueRecord[] = [];
    for (let i = start; i < end; i++) out.push(this.record(this.order[i]!));
    return out;
  }

  /** Record `r` as a {@link KeyValueRecord} (its key values are not read by the merge). */
  record(r: number): KeyValueRecord {
    return { key: NO_KEY, sequence: this.firstSequence + BigInt(r), kind: this.kindOf[r]!, chunk: this.chunkOf[r]!, row: this.rowOf[r]! };
  }

  /** Sequence numbers of records (`firstSequence + r`), without a BigInt per record. */
  sequencesOf(records: Uint32Array): BigInt64Array {
    const out = new BigInt64Array(records.length);
    const halves = new Uint32Array(out.buffer);
    const first = BigInt.asUintN(64, this.firstSequence);
    const lo = Number(first & 0xffffffffn);
    const hi = Number(first >> 32n);
    for (let i = 0; i < records.length; i++) {
      const sum = lo + records[i]!;
      halves[2 * i] = sum >>> 0;
      halves[2 * i + 1] = (hi + (sum >= 0x100000000 ? 1 : 0)) >>> 0;
    }
    return out;
  }

  /** Row kinds of records. */
  kindsOf(records: Uint32Array): Int8Array {
    const out = new Int8Array(records.length);
    for (let i = 0; i < records.length; i++) out[i] = this.kindOf[records[i]!]!;
    return out;
  }

  /** Every column of records, gathered from the chunks (one set of positions for all columns). */
  gather(records: Uint32Array): arrow.Data[] {
    const chunks = new Uint32Array(records.length);
    const rows = new Uint32Array(records.length);
    for (let i = 0; i < records.length; i++) {
      chunks[i] = this.chunkOf[records[i]!]!;
      rows[i] = this.rowOf[records[i]!]!;
    }
    return this.fields.map((_, c) => takeChunks(this.chunks[c]!, { chunks, rows }, this.arrowTypes[c]!));
  }

  /**
   * Column `c` of merged rows: each row's value is at (`chunks[k]`, `rows[k]`) of the column's
   * chunks, or `NULL_SOURCE` (null), or `COMPUTED_SOURCE` with `rows[k]` indexing `computed`
   * (aggregated values, built into one more chunk).
   */
  gatherSources(c: number, chunks: Uint32Array, rows: Uint32Array, computed: readonly AggregatedCell[], input: MergeInput): arrow.Data {
    const sources = this.chunks[c]!;
    const type = this.arrowTypes[c]!;
    const extra: arrow.Data[] = [nullData(type, 1)];
    if (computed.length > 0) extra.push(buildAggregatedColumn(computed, c, sources, type, this.types[c]!, input!));
    for (let k = 0; k < chunks.length; k++) {
      if (chunks[k] === NULL_SOURCE) chunks[k] = sources.length;
      else if (chunks[k] === COMPUTED_SOURCE) chunks[k] = sources.length + 1;
    }
    return takeChunks([...sources, ...extra], { chunks, rows }, type);
  }

  chunkAt(r: number): number {
    return this.chunkOf[r]!;
  }

  rowAt(r: number): number {
    return this.rowOf[r]!;
  }

  kindAt(r: number): number {
    return this.kindOf[r]!;
  }
}

type MergeInput = ReturnType<typeof chunkedAggregationInput> | null;

const NO_KEY: readonly never[] = [];
/** Source markers of {@link SortedKeyValues.gatherSources}. */
const NULL_SOURCE = 0xffffffff;
const COMPUTED_SOURCE = 0xfffffffe;

/** The merged rows of a write buffer, one per surviving key, sliceable into what a file writer takes. */
export class MergedBuffer {
  constructor(
    private readonly sorted: SortedKeyValues,
    /** The record of each row (for merged rows: the key's latest record). */
    private readonly picked: Uint32Array,
    /** Index into `mergedRows` of each row that several records were merged into, else -1. */
    private readonly mergedAt: Int32Array,
    private readonly mergedRows: readonly MergedRow[],
    private readonly input: MergeInput,
  ) {}

  get length(): number {
    return this.picked.length;
  }

  /** Sequence numbers of rows [start, end). */
  sequences(start = 0, end = this.length): BigInt64Array {
    return this.withMerged(this.sorted.sequencesOf(this.picked.subarray(start, end)), start, end, (row) => row.sequence);
  }

  /** Row kinds of rows [start, end). */
  kinds(start = 0, end = this.length): Int8Array {
    return this.withMerged(this.sorted.kindsOf(this.picked.subarray(start, end)), start, end, (row) => row.kind);
  }

  /** `out` (rows [start, end) from their records) with the merged rows' own values put in. */
  private withMerged<T extends BigInt64Array | Int8Array>(out: T, start: number, end: number, of: (row: MergedRow) => T[number]): T {
    for (let i = start; i < end; i++) {
      const m = this.mergedAt[i]!;
      if (m >= 0) out[i - start] = of(this.mergedRows[m]!);
    }
    return out;
  }

  /** The columns of rows [start, end). */
  columns(start = 0, end = this.length): arrow.Data[] {
    const records = this.picked.subarray(start, end);
    let anyMerged = false;
    for (let i = start; i < end && !anyMerged; i++) anyMerged = this.mergedAt[i]! >= 0;
    if (!anyMerged) return this.sorted.gather(records);
    return this.sortedColumns((c) => this.mergedColumn(c, start, end));
  }

  private sortedColumns(column: (c: number) => arrow.Data): arrow.Data[] {
    const out: arrow.Data[] = [];
    for (let c = 0; c < this.columnCount; c++) out.push(column(c));
    return out;
  }

  private get columnCount(): number {
    return this.sorted.fields.length;
  }

  /** Column `c` of rows [start, end), some of which were merged from several records. */
  private mergedColumn(c: number, start: number, end: number): arrow.Data {
    const n = end - start;
    const chunks = new Uint32Array(n);
    const rows = new Uint32Array(n);
    const computed: AggregatedCell[] = [];
    for (let i = start; i < end; i++) {
      const k = i - start;
      const m = this.mergedAt[i]!;
      if (m < 0) {
        const r = this.picked[i]!;
        chunks[k] = this.sorted.chunkAt(r);
        rows[k] = this.sorted.rowAt(r);
        continue;
      }
      const row = this.mergedRows[m]!;
      let source: KeyValueRecord | null;
      if (row.columnSources) source = row.columnSources[c]!;
      else if (row.cells) {
        const cell = row.cells[c]!;
        if (cell !== null && !('ref' in cell)) {
          chunks[k] = COMPUTED_SOURCE;
          rows[k] = computed.length;
          computed.push(cell);
          continue;
        }
        source = cell === null ? null : cell.ref;
      } else source = row.record;
      if (source === null) chunks[k] = NULL_SOURCE;
      else {
        chunks[k] = source.chunk;
        rows[k] = source.row;
      }
    }
    return this.sorted.gatherSources(c, chunks, rows, computed, this.input);
  }
}

/** Records `a` and `b` have equal words in [0, count). */
function sameWords(words: Uint32Array, stride: number, a: number, b: number, count: number): boolean {
  const x = a * stride;
  const y = b * stride;
  for (let w = 0; w < count; w++) if (words[x + w] !== words[y + w]) return false;
  return true;
}

/**
 * Record numbers 0..n-1 ordered by their words (unsigned, word 0 first), ties in number order:
 * a stable LSD radix sort, a byte per pass, passes whose byte is the same for every record skipped.
 */
export function sortByWords(words: Uint32Array, stride: number, n: number): Uint32Array {
  let order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  if (n < 2 || stride === 0) return order;
  if (n <= INSERTION_SORT_MAX) return insertionSort(words, stride, order);
  let scratch = new Uint32Array(n);
  let digits = new Uint32Array(n);
  let digitsScratch = new Uint32Array(n);
  const counts = new Uint32Array(256);
  for (let w = stride - 1; w >= 0; w--) {
    // The word of each record in the current order, moved along with it through the word's passes.
    for (let i = 0; i < n; i++) digits[i] = words[order[i]! * stride + w]!;
    for (let shift = 0; shift < 32; shift += 8) {
      counts.fill(0);
      for (let i = 0; i < n; i++) counts[(digits[i]! >>> shift) & 0xff]!++;
      if (counts[(digits[0]! >>> shift) & 0xff] === n) continue;
      let sum = 0;
      for (let d = 0; d < 256; d++) {
        const c = counts[d]!;
        counts[d] = sum;
        sum += c;
      }
      for (let i = 0; i < n; i++) {
        const at = counts[(digits[i]! >>> shift) & 0xff]!++;
        scratch[at] = order[i]!;
        digitsScratch[at] = digits[i]!;
      }
      [order, scratch] = [scratch, order];
      [digits, digitsScratch] = [digitsScratch, digits];
    }
  }
  return order;
}

function insertionSort(words: Uint32Array, stride: number, order: Uint32Array): Uint32Array {
  for (let i = 1; i < order.length; i++) {
    const r = order[i]!;
    let j = i - 1;
    while (j >= 0 && lessWords(words, stride, r, order[j]!)) {
      order[j + 1] = order[j]!;
      j--;
    }
    order[j + 1] = r;
  }
  return order;
}

/** Record `a`'s words sort strictly before record `b`'s. */
function lessWords(words: Uint32Array, stride: number, a: number, b: number): boolean {
  for (let w = 0; w < stride; w++) {
    const x = words[a * stride + w]!;
    const y = words[b * stride + w]!;
    if (x !== y) return x < y;
  }
  return false;
}
