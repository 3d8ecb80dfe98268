/**
 * One stripe's bytes: its footer (stream list, column encodings, writer time zone) and the streams
 * of the columns being read. Only the needed streams are fetched; streams that lie next to each
 * other (or close: a gap of up to {@link COALESCE_GAP_BYTES}) are fetched with one ranged read.
 */
import { decompressStream } from './compression.js';
import { checkEncoding, type StripeStreams } from './column-readers.js';
import { OrcDecodeError } from './errors.js';
import {
  decodeRowIndex,
  decodeStripeFooter,
  StreamKind,
  type ColumnEncoding,
  type RowIndexEntry,
  type StripeFooter,
  type StripeInformation,
} from './proto.js';
import type { OrcTypeNode } from './schema.js';
import type { OrcSource } from './source.js';

/** Gap between two needed streams below which one read is cheaper than two round trips. */
export const COALESCE_GAP_BYTES = 64 * 1024;

interface Compression {
  readonly kind: number;
  readonly blockSize: number;
  /** The postscript's format version. */
  readonly version: readonly number[];
}

/** Compressed start offset and decompressed start offset of every chunk of a stream. */
interface ChunkMap {
  readonly compressed: number[];
  readonly decompressed: number[];
  /** Compressed length of the stream. */
  length?: number;
}

interface StreamPlace {
  readonly kind: StreamKind;
  readonly column: number;
  readonly offset: number;
  readonly length: number;
}

/** The footer and stream layout of one stripe. */
export class StripeLayout {
  private constructor(
    readonly info: StripeInformation,
    readonly footer: StripeFooter,
    private readonly places: readonly StreamPlace[],
    private readonly compression: Compression,
    private readonly source: OrcSource,
  ) {}

  static async open(source: OrcSource, info: StripeInformation, compression: Compression): Promise<StripeLayout> {
    const footerStart = info.offset + info.indexLength + info.dataLength;
    const raw = await source.read(footerStart, info.footerLength);
    const footer = decodeStripeFooter(decompressStream(compression.kind, compression.blockSize, raw));
    const places: StreamPlace[] = [];
    let at = info.offset;
    for (const s of footer.streams) {
      places.push({ kind: s.kind, column: s.column, offset: at, length: s.length });
      at += s.length;
    }
    if (at > footerStart) {
      throw new OrcDecodeError(
        `the stripe at byte ${info.offset} lists ${at - info.offset} bytes of streams, but has ${footerStart - info.offset}`,
      );
    }
    return new StripeLayout(info, footer, places, compression, source);
  }

  /** Fetches and decompresses the data streams of the given columns (ids); returns them for the column readers. */
  async dataStreams(columns: readonly OrcTypeNode[]): Promise<StripeStreams> {
    const ids = new Set<number>();
    for (const c of columns) for (let id = c.id; id <= c.maxId; id++) ids.add(id);
    for (const c of columns) this.checkEncodings(c);
    const wanted = this.places.filter(
      (p) =>
        ids.has(p.column) &&
        p.kind !== StreamKind.ROW_INDEX &&
        p.kind !== StreamKind.BLOOM_FILTER &&
        p.kind !== StreamKind.BLOOM_FILTER_UTF8,
    );
    const raw = await this.fetch(wanted);
    const byKey = new Map<string, Uint8Array>();
    const chunks = new Map<string, ChunkMap>();
    for (const p of wanted) {
      const key = `${p.column}:${p.kind}`;
      if (byKey.has(key)) throw new OrcDecodeError(`column ${p.column} has two streams of kind ${p.kind}`);
      const map: ChunkMap = { compressed: [], decompressed: [], length: p.length };
      byKey.set(key, decompressStream(this.compression.kind, this.compression.blockSize, raw.get(p)!, map));
      chunks.set(key, map);
    }
    const encodings = this.footer.columns;
    const compressed = this.compression.kind !== 0;
    return {
      stream: (column, kind) => byKey.get(`${column}:${kind}`) ?? null,
      encoding: (column) => encodings[column]!,
      streamOffset: (column, kind, positions) => {
        const key = `${column}:${kind}`;
        const bytes = byKey.get(key);
        if (!bytes) throw new OrcDecodeError(`column ${column}: the row index positions stream ${kind}, which the stripe lacks`);
        const first = positions.next();
        let offset = first;
        if (compressed) {
          const map = chunks.get(key)!;
          const inChunk = positions.next();
          const i = map.compressed.indexOf(first);
          // A position just past the last chunk addresses the end of the stream.
          const start = i >= 0 ? map.decompressed[i]! : first === map.length ? bytes.length : -1;
          if (start < 0) throw new OrcDecodeError(`column ${column}: row index position ${first} is not the start of a compressed chunk`);
          offset = start + inChunk;
        }
        if (offset > bytes.length)
          throw new OrcDecodeError(`column ${column}: row index position ${offset} is beyond its stream (${bytes.length} bytes)`);
        return offset;
      },
      writerTimezone: this.footer.writerTimezone,
      decimal64ByVersion: this.compression.version[0] === 1 && this.compression.version[1] === 9999,
    };
  }

  /**
   * The row indexes (one entry per row group) of the given columns, fetched together; a column
   * without a ROW_INDEX stream in this stripe is absent from the result.
   */
  async rowIndexes(columns: Iterable<number>): Promise<Map<number, RowIndexEntry[]>> {
    const ids = new Set(columns);
    const places = this.places.filter((p) => ids.has(p.column) && p.kind === StreamKind.ROW_INDEX);
    const raw = await this.fetch(places);
    const out = new Map<number, RowIndexEntry[]>();
    for (const p of places)
      out.set(p.column, decodeRowIndex(decompressStream(this.compression.kind, this.compression.blockSize, raw.get(p)!)));
    return out;
  }

  private checkEncodings(node: OrcTypeNode): void {
    const encoding: ColumnEncoding | undefined = this.footer.columns[node.id];
    if (!encoding) throw new OrcDecodeError(`the stripe footer has no encoding for column ${node.id}`);
    checkEncoding(node, encoding);
    for (const child of node.children) this.checkEncodings(child);
  }

  /** Reads the given streams, coalescing nearby ones into single ranged reads. */
  private async fetch(places: readonly StreamPlace[]): Promise<Map<StreamPlace, Uint8Array>> {
    const out = new Map<StreamPlace, Uint8Array>();
    // An empty stream (say, the DATA of an all-null column) needs no read.
    for (const p of places) if (p.length === 0) out.set(p, new Uint8Array(0));
    const sorted = places.filter((p) => p.length > 0).sort((a, b) => a.offset - b.offset);
    const reads: Promise<void>[] = [];
    let i = 0;
    while (i < sorted.length) {
      const group = [sorted[i]!];
      let end = sorted[i]!.offset + sorted[i]!.length;
      while (i + group.length < sorted.length && sorted[i + group.length]!.offset - end <= COALESCE_GAP_BYTES) {
        const next = sorted[i + group.length]!;
        group.push(next);
        end = Math.max(end, next.offset + next.length);
      }
      const start = group[0]!.offset;
      reads.push(
        this.source.read(start, end - start).then((bytes) => {
          if (bytes.length !== end - start) throw new OrcDecodeError(`short read of the stripe at byte ${start}`);
          for (const p of group) out.set(p, bytes.subarray(p.offset - start, p.offset - start + p.length));
        }),
      );
      i += group.length;
    }
    await Promise.all(reads);
    return out;
  }
}
