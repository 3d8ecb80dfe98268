/**
 * Merge of primary-key records held in Arrow chunks, shared by merge-on-read, the write buffer of
 * the merge-tree writer and compaction: records are built from the chunks (key, `sequence.field`
 * values, sequence number, row kind), sorted, merged per key by the table's merge engine, and the
 * merged rows are gathered back into Arrow columns Arrow-natively.
 */
import * as arrow from 'apache-arrow';
import { toArrowType, type DataField, type Value } from '@tidemark/format';
import { nullData, takeChunks } from './arrow-take.js';
import { valueReader } from './arrow-values.js';
import { buildAggregatedColumn, chunkedAggregationInput } from './aggregated-columns.js';
import { mergeRecords, sortRecords, type KeyValueRecord, type MergeEngineOptions, type MergedRow } from './merge-engine.js';

/** Records gathered over Arrow chunks: `chunks[column][chunk]` holds the values of `fields[column]`. */
export class KeyValueChunks {
  readonly chunks: arrow.Data[][];
  readonly records: KeyValueRecord[] = [];
  private readonly keyPositions: number[];
  private readonly seqPositions: number[];
  private chunkCount = 0;

  /**
   * @param fields the columns held (must include the key and `sequence.field` columns)
   * @param keyFields trimmed primary-key fields
   * @param sequenceFields `sequence.field` columns (ordering records of a key before the sequence number)
   */
  constructor(
    readonly fields: readonly DataField[],
    private readonly keyFields: readonly DataField[],
    private readonly sequenceFields: readonly DataField[] = [],
  ) {
    this.chunks = fields.map(() => []);
    const position = (k: DataField): number => {
      const p = fields.findIndex((f) => f.id === k.id);
      if (p < 0) throw new TypeError(`column '${k.name}' is needed to merge but not held`);
      return p;
    };
    this.keyPositions = keyFields.map(position);
    this.seqPositions = sequenceFields.map(position);
  }

  /** Number of records added. */
  get size(): number {
    return this.records.length;
  }

  /**
   * Adds a chunk: `columns` in {@link fields} order, one sequence number and row kind per row.
   * With `selection`, only those rows of the chunk are records (`rows` is then its length): the
   * rows a key search found, taken where they are instead of copied out first.
   */
  add(
    columns: readonly arrow.Data[],
    sequence: ArrayLike<bigint>,
    kinds: ArrayLike<number>,
    rows = columns[0]?.length ?? 0,
    selection?: readonly number[],
  ): void {
    const chunk = this.chunkCount++;
    columns.forEach((c, i) => this.chunks[i]!.push(c));
    const readers = this.keyPositions.map((p, j) => valueReader(columns[p]!, this.keyFields[j]!.type));
    const seqReaders = this.seqPositions.map((p, j) => valueReader(columns[p]!, this.sequenceFields[j]!.type));
    const nk = readers.length;
    const ns = seqReaders.length;
    for (let k = 0; k < rows; k++) {
      const r = selection === undefined ? k : selection[k]!;
      const key = new Array<Value>(nk);
      for (let j = 0; j < nk; j++) key[j] = readers[j]!(r);
      if (ns === 0) {
        this.records.push({ key, sequence: sequence[r]!, kind: kinds[r]!, chunk, row: r });
        continue;
      }
      const userSequence = new Array<Value>(ns);
      for (let j = 0; j < ns; j++) userSequence[j] = seqReaders[j]!(r);
      this.records.push({ key, sequence: sequence[r]!, userSequence, kind: kinds[r]!, chunk, row: r });
    }
  }

  /**
   * Sorts and merges all records. With `keepRetractions` the result holds one row per key with
   * its row kind (what a writer stores); otherwise -U/-D results are dropped (what a read returns).
   * The first `outputCount` fields (default all) are produced.
   */
  merge(options: MergeEngineOptions, keepRetractions: boolean, outputCount = this.fields.length): MergedKeyValues {
    const sorted = sortRecords(this.records, options);
    const types = this.fields.map((f) => f.type);
    const input = chunkedAggregationInput(this.chunks, types);
    const columns = { names: this.fields.map((f) => f.name), types, input };
    const merged = mergeRecords(sorted, options, columns, keepRetractions);
    return new MergedKeyValues(this, merged, outputCount, input);
  }
}

/** The merged rows of {@link KeyValueChunks.merge}, sliceable into Arrow columns. */
export class MergedKeyValues {
  constructor(
    private readonly source: KeyValueChunks,
    readonly rows: readonly MergedRow[],
    private readonly outputCount: number,
    private readonly input: ReturnType<typeof chunkedAggregationInput>,
  ) {}

  get length(): number {
    return this.rows.length;
  }

  /** Sequence numbers of rows [start, end). */
  sequences(start = 0, end = this.rows.length): BigInt64Array {
    const out = new BigInt64Array(end - start);
    for (let i = start; i < end; i++) out[i - start] = this.rows[i]!.sequence;
    return out;
  }

  /** Row kinds of rows [start, end). */
  kinds(start = 0, end = this.rows.length): Int8Array {
    const out = new Int8Array(end - start);
    for (let i = start; i < end; i++) out[i - start] = this.rows[i]!.kind;
    return out;
  }

  /** The columns (first `outputCount` fields) of rows [start, end). */
  columns(start = 0, end = this.rows.length): arrow.Data[] {
    const slice = this.rows.slice(start, end);
    const out: arrow.Data[] = [];
    for (let c = 0; c < this.outputCount; c++) {
      const field = this.source.fields[c]!;
      const type = toArrowType(field.type);
      const sources = this.source.chunks[c]!;
      if (slice.some((m) => m.cells)) {
        // A key with a single record is passed through unmerged: its cells are references to it.
        const cells = slice.map((m) => (m.cells ? m.cells[c]! : this.input.isNull(m.record, c) ? null : { ref: m.record }));
        out.push(buildAggregatedColumn(cells, c, sources, type, field.type, this.input));
        continue;
      }
      // A null source (a column partial update set to NULL) points at one extra all-null chunk.
      let nullSource = false;
      const chunkIdx = new Uint32Array(slice.length);
      const rowIdx = new Uint32Array(slice.length);
      slice.forEach((m, k) => {
        const src = m.columnSources ? m.columnSources[c]! : m.record;
        if (src === null) {
          chunkIdx[k] = sources.length;
          nullSource = true;
        } else {
          chunkIdx[k] = src.chunk;
          rowIdx[k] = src.row;
        }
      });
      out.push(takeChunks(nullSource ? [...sources, nullData(type, 1)] : sources, { chunks: chunkIdx, rows: rowIdx }, type));
    }
    return out;
  }
}
