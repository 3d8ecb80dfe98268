import { readFile, stat } from 'node:fs/promises';
import type { FileIO } from '@tidemark/storage';

/**
 * Read-only FileIO over in-memory byte arrays or local files that counts ranged reads, for the
 * Parquet tests (the storage package's stores are not needed to test range access).
 */
export class CountingFileIO {
  readonly kind = 'counting';
  rangeReads = 0;
  bytesRead = 0;
  wholeReads = 0;
  private readonly files = new Map<string, Uint8Array>();

  put(path: string, bytes: Uint8Array): this {
    this.files.set(path, bytes);
    return this;
  }

  private async load(path: string): Promise<Uint8Array> {
    const mem = this.files.get(path);
    if (mem) return mem;
    return new Uint8Array(await readFile(path));
  }

  async read(path: string): Promise<Uint8Array> {
    this.wholeReads++;
    return (await this.load(path)).slice();
  }

  async readRange(path: string, offset: number, length: number): Promise<Uint8Array> {
    const bytes = await this.load(path);
    if (offset >= bytes.length && length > 0) throw new Error(`range ${offset} past end of ${path}`);
    this.rangeReads++;
    const out = bytes.slice(offset, Math.min(bytes.length, offset + length));
    this.bytesRead += out.length;
    return out;
  }

  async stat(path: string): Promise<{ path: string; size: number; lastModified: Date }> {
    const mem = this.files.get(path);
    if (mem) return { path, size: mem.length, lastModified: new Date(0) };
    const s = await stat(path);
    return { path, size: s.size, lastModified: s.mtime };
  }

  reset(): void {
    this.rangeReads = 0;
    this.bytesRead = 0;
    this.wholeReads = 0;
  }

  asFileIO(): FileIO {
    return this as unknown as FileIO;
  }
}
