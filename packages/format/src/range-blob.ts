/**
 * A duck-typed `Blob` over a byte range of a file in a {@link FileIO}.
 *
 * parquet-wasm's `ParquetFile.fromFile` only calls `size`, `slice(start, end)` and
 * `arrayBuffer()`, so this adapter lets it fetch the footer and the projected column chunks with
 * ranged reads instead of downloading the whole object.
 */
import type { FileIO } from '@tidemark/storage';

/** Bytes of the object already in memory: `bytes` hold the object's bytes from offset `start` on. */
interface CachedRange {
  readonly start: number;
  readonly bytes: Uint8Array;
}

/** A Blob-like view of (a slice of) one object whose bytes are fetched with ranged reads on demand. */
export class RangeBlob {
  /** Bytes in this blob (the whole file or a slice of it). */
  readonly size: number;
  readonly type = '';

  constructor(
    private readonly io: FileIO,
    private readonly path: string,
    private readonly start: number,
    size: number,
    private readonly cached: CachedRange | null = null,
  ) {
    this.size = size;
  }

  /**
   * Opens a blob over the whole object; one `stat` unless `size` is already known. With
   * `prefetchTail`, the last `prefetchTail` bytes (the whole object when smaller) are read at once
   * and slices inside them are served from memory: a Parquet footer then costs one read instead
   * of two, and a small file is read once in all.
   */
  static async open(io: FileIO, path: string, size?: number, prefetchTail = 0): Promise<RangeBlob> {
    const length = size ?? (await io.stat(path)).size;
    let cached: CachedRange | null = null;
    if (prefetchTail > 0 && length > 0) {
      const start = Math.max(0, length - prefetchTail);
      cached = { start, bytes: await io.readRange(path, start, length - start) };
    }
    return new RangeBlob(io, path, 0, length, cached);
  }

  /** The prefetched tail of the object (see {@link open}); empty when nothing was prefetched. */
  get tail(): Uint8Array {
    return this.cached?.bytes ?? new Uint8Array(0);
  }

  /** Same semantics as `Blob.slice`: negative offsets count from the end, bounds are clamped. */
  slice(start?: number, end?: number): RangeBlob {
    const from = clamp(start ?? 0, this.size);
    const to = clamp(end ?? this.size, this.size);
    return new RangeBlob(this.io, this.path, this.start + from, Math.max(0, to - from), this.cached);
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    return toArrayBuffer(await this.bytes());
  }

  /** Reads the bytes of this blob with a single ranged read (none when prefetched). */
  async bytes(): Promise<Uint8Array> {
    if (this.size === 0) return new Uint8Array(0);
    const c = this.cached;
    if (c !== null && this.start >= c.start && this.start + this.size <= c.start + c.bytes.length) {
      return c.bytes.subarray(this.start - c.start, this.start - c.start + this.size);
    }
    return this.io.readRange(this.path, this.start, this.size);
  }
}

function clamp(offset: number, size: number): number {
  const relative = offset < 0 ? size + offset : offset;
  return Math.min(Math.max(relative, 0), size);
}

function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer) {
    return bytes.buffer;
  }
  return bytes.slice().buffer as ArrayBuffer;
}
