/**
 * Reading an ORC file as Arrow record batches: the tail once, then per selected stripe the
 * streams of the projected columns, decoded into one or more batches.
 */
import * as arrow from 'apache-arrow';

import { createColumnReader, Positions, type RowGroupPositions } from './column-readers.js';
import { CorruptOrcFileError, OrcDecodeError, OrcError } from './errors.js';
import { mayMatch, predicateColumns, type OrcPredicate } from './predicate.js';
import { TypeKind, type ColumnStatistics, type StripeInformation } from './proto.js';
import { arrowField, buildTypeTree, type OrcTypeNode } from './schema.js';
import type { OrcSource } from './source.js';
import { StripeLayout } from './stripe.js';
import { readTail, type OrcTail } from './tail.js';

/** Name of the single column of a file whose root type is not a struct. */
export const ROOT_COLUMN_NAME = 'value';

/** Options of {@link OrcReader.readBatches}. */
export interface OrcReadOptions {
  /** Top-level column names to read, in file order; all columns when absent. */
  readonly columns?: readonly string[];
  /**
   * Rows that may match are kept: stripes and row groups whose statistics prove that no row
   * satisfies it are skipped (rows of the remaining ones are returned unfiltered).
   */
  readonly predicate?: OrcPredicate;
  /** Maximum rows per batch; a batch never spans two stripes. Default: one batch per stripe. */
  readonly batchSize?: number;
  /**
   * Reads only the row groups (of `rowIndexStride` rows; indexes within their stripe) for which
   * this returns true, on top of the predicate's selection; needs a file with a row index.
   */
  readonly selectRowGroup?: (stripe: number, rowGroup: number) => boolean;
}

/** What a read skipped and fetched, for callers and tests that check pruning. */
export interface OrcReadStats {
  stripesRead: number;
  stripesSkipped: number;
  rowGroupsSkipped: number;
  /** Jumps over skipped row groups through the row index (instead of decoding and dropping them). */
  seeks: number;
}

/** An open ORC file: its tail is decoded, stripes are read on demand. */
export class OrcReader {
  /** The type tree (column ids in pre-order, root = 0). */
  readonly root: OrcTypeNode;
  /** Arrow schema of all top-level columns. */
  readonly schema: arrow.Schema;
  readonly stats: OrcReadStats = { stripesRead: 0, stripesSkipped: 0, rowGroupsSkipped: 0, seeks: 0 };

  private constructor(
    private readonly source: OrcSource,
    readonly path: string,
    readonly tail: OrcTail,
  ) {
    try {
      this.root = buildTypeTree(tail.footer.types);
    } catch (err) {
      throw this.wrap(err, 'invalid type list');
    }
    this.schema = new arrow.Schema(this.topLevel().map(([name, node]) => arrowField(name, node)));
  }

  /**
   * Opens a file: reads and decodes its tail (postscript, footer, stripe statistics).
   *
   * @throws CorruptOrcFileError when the bytes are not a readable ORC file; UnsupportedOrcFeatureError
   *   for LZO compression, encryption or an unknown format version.
   */
  static async open(source: OrcSource, path: string): Promise<OrcReader> {
    return new OrcReader(source, path, await readTail(source, path));
  }

  get numberOfRows(): number {
    return this.tail.numberOfRows;
  }

  get stripes(): readonly StripeInformation[] {
    return this.tail.footer.stripes;
  }

  /** User metadata of the footer (key to raw bytes). */
  get metadata(): ReadonlyMap<string, Uint8Array> {
    return this.tail.footer.metadata;
  }

  /** Top-level columns as (name, node); a non-struct root is one column named {@link ROOT_COLUMN_NAME}. */
  topLevel(): [string, OrcTypeNode][] {
    if (this.root.kind !== TypeKind.STRUCT) return [[ROOT_COLUMN_NAME, this.root]];
    return this.root.children.map((c, i) => [this.root.fieldNames[i]!, c]);
  }

  /** File-level statistics of a top-level column. */
  columnStatistics(name: string): ColumnStatistics | undefined {
    const node = this.topLevel().find(([n]) => n === name)?.[1];
    return node ? this.tail.footer.statistics[node.id] : undefined;
  }

  /**
   * Streams the rows as Arrow record batches with the projected columns (Arrow schema =
   * the projection of {@link schema}).
   *
   * @throws OrcError naming an unknown column; CorruptOrcFileError naming the stripe and column
   *   when a stream does not decode.
   */
  async *readBatches(options: OrcReadOptions = {}): AsyncGenerator<arrow.RecordBatch> {
    const all = this.topLevel();
    const byName = new Map(all);
    for (const c of options.columns ?? []) {
      if (!byName.has(c)) {
        throw new OrcError(`${this.path}: no column '${c}' in the ORC file (columns: ${all.map(([n]) => n).join(', ')})`);
      }
    }
    const selected = options.columns ? all.filter(([n]) => options.columns!.includes(n)) : all;
    const schema = new arrow.Schema(selected.map(([name, node]) => arrowField(name, node)));
    const predicate = options.predicate;
    const predicateNodes = new Map<string, OrcTypeNode>();
    if (predicate) {
      for (const c of predicateColumns(predicate)) {
        const node = byName.get(c);
        if (node) predicateNodes.set(c, node);
      }
      const fileStats = this.tail.footer.statistics;
      if (!mayMatch(predicate, (c) => fileStats[predicateNodes.get(c)?.id ?? -1], this.numberOfRows)) {
        this.stats.stripesSkipped += this.stripes.length;
        return;
      }
    }
    const ps = this.tail.postScript;
    const compression = { kind: ps.compression, blockSize: ps.compressionBlockSize, version: ps.version };
    for (const [index, info] of this.stripes.entries()) {
      if (info.numberOfRows === 0) continue;
      if (predicate) {
        const stripeStats = this.tail.stripeStatistics[index];
        if (stripeStats && !mayMatch(predicate, (c) => stripeStats[predicateNodes.get(c)?.id ?? -1], info.numberOfRows)) {
          this.stats.stripesSkipped++;
          continue;
        }
      }
      try {
        const layout = await StripeLayout.open(this.source, info, compression);
        let groups = predicate ? await this.selectRowGroups(layout, predicate, predicateNodes) : null;
        const stride = this.tail.footer.rowIndexStride;
        if (options.selectRowGroup && stride > 0) {
          const count = Math.ceil(info.numberOfRows / stride);
          const chosen = Array.from({ length: count }, (_, g) => (groups ? groups[g]! : true) && options.selectRowGroup!(index, g));
          groups = chosen;
        }
        if (groups && groups.every((g) => !g)) {
          this.stats.stripesSkipped++;
          this.stats.rowGroupsSkipped += groups.length;
          continue;
        }
        this.stats.stripesRead++;
        const nodes = selected.map(([, n]) => n);
        const streams = await layout.dataStreams(nodes);
        const readers = selected.map(([, node]) => createColumnReader(node, streams));
        const ranges = rowRanges(info.numberOfRows, groups, stride);
        // Seeking to a row group needs the row index of every column read; without it, rows of
        // skipped groups are decoded and dropped instead.
        const indexes = groups && ranges.some(([start]) => start > 0) ? await layout.rowIndexes(columnIds(nodes)) : null;
        const canSeek = indexes !== null && [...columnIds(nodes)].every((id) => indexes.has(id));
        let position = 0;
        for (const [start, end] of ranges) {
          if (start > position) {
            if (canSeek) {
              const group = start / stride;
              const at: RowGroupPositions = (column) => {
                const entry = indexes.get(column)?.[group];
                if (!entry) throw new OrcDecodeError(`column ${column} has no row index entry for row group ${group}`);
                return new Positions(entry.positions, column);
              };
              for (const r of readers) r.seek(at);
              this.stats.seeks++;
            } else readers.forEach((r) => r.read(start - position, null));
          }
          const step = options.batchSize ?? end - start;
          for (let at = start; at < end; at += step) {
            const n = Math.min(step, end - at);
            const children = readers.map((r) => r.read(n, null));
            const data = arrow.makeData({ type: new arrow.Struct(schema.fields), length: n, nullCount: 0, children });
            yield new arrow.RecordBatch(schema, data);
          }
          position = end;
        }
        if (groups) this.stats.rowGroupsSkipped += groups.filter((g) => !g).length;
      } catch (err) {
        throw this.wrap(err, `stripe ${index}`);
      }
    }
  }

  /** Row groups of a stripe that may match (null when the stripe has no row index for the predicate's columns). */
  private async selectRowGroups(layout: StripeLayout, predicate: OrcPredicate, nodes: Map<string, OrcTypeNode>): Promise<boolean[] | null> {
    const stride = this.tail.footer.rowIndexStride;
    if (stride <= 0 || nodes.size === 0) return null;
    const byId = await layout.rowIndexes([...nodes.values()].map((n) => n.id));
    const groupCount = Math.ceil(layout.info.numberOfRows / stride);
    const out: boolean[] = [];
    for (let g = 0; g < groupCount; g++) {
      const rows = Math.min(stride, layout.info.numberOfRows - g * stride);
      out.push(mayMatch(predicate, (c) => byId.get(nodes.get(c)?.id ?? -1)?.[g]?.statistics ?? undefined, rows));
    }
    return out;
  }

  private wrap(err: unknown, where: string): Error {
    if (err instanceof OrcDecodeError) return new CorruptOrcFileError(this.path, `${where}: ${err.message}`, { cause: err });
    if (err instanceof OrcError) return err;
    if (err instanceof RangeError || err instanceof TypeError) {
      return new CorruptOrcFileError(this.path, `${where}: ${err.message}`, { cause: err });
    }
    return err as Error;
  }
}

/** Column ids of the given subtrees. */
function columnIds(nodes: readonly OrcTypeNode[]): Set<number> {
  const out = new Set<number>();
  for (const n of nodes) for (let id = n.id; id <= n.maxId; id++) out.add(id);
  return out;
}

/** Contiguous row ranges of a stripe to return: all rows, or the runs of selected row groups. */
function rowRanges(rows: number, groups: boolean[] | null, stride: number): [number, number][] {
  if (!groups) return [[0, rows]];
  const out: [number, number][] = [];
  for (let g = 0; g < groups.length; g++) {
    if (!groups[g]) continue;
    const start = g * stride;
    const end = Math.min(rows, start + stride);
    const last = out[out.length - 1];
    if (last && last[1] === start) last[1] = end;
    else out.push([start, end]);
  }
  return out;
}
