import { toBytes, clampRange, validateRangeArgs } from './bytes.js';
import { NotFoundError, StorageConfigError } from './errors.js';
import type { CreateResult, FileIO, FileStatus, ListOptions } from './file-io.js';
import { joinPath, parseLocation } from './path.js';

interface MemoryObject {
  readonly data: Uint8Array;
  readonly lastModified: Date;
}

/** One store per `memory://<name>`, shared by every MemoryFileIO in the process. */
const registry = new Map<string, Map<string, MemoryObject>>();

function storeFor(name: string): Map<string, MemoryObject> {
  let store = registry.get(name);
  if (!store) {
    store = new Map();
    registry.set(name, store);
  }
  return store;
}

/**
 * In-process object store for unit tests only (`memory://<name>/<key>`). Two instances see the
 * same objects when they address the same name. Every operation completes its mutation
 * synchronously, so `createIfAbsent` is atomic by construction.
 */
export class MemoryFileIO implements FileIO {
  readonly kind = 'memory';

  /** Drops every object of the store `name` (or of all stores). Meant for test clean-up. */
  static clear(name?: string): void {
    if (name === undefined) registry.clear();
    else registry.delete(name);
  }

  private locate(path: string): { store: Map<string, MemoryObject>; key: string; name: string } {
    const loc = parseLocation(path);
    if (loc.scheme !== 'memory') {
      throw new StorageConfigError(`MemoryFileIO only handles memory://<name>/<key> locations, got ${path}`);
    }
    return { store: storeFor(loc.bucket!), key: loc.key!, name: loc.bucket! };
  }

  private get(path: string): MemoryObject {
    const { store, key } = this.locate(path);
    const obj = store.get(key);
    if (!obj) throw new NotFoundError(path);
    return obj;
  }

  async read(path: string): Promise<Uint8Array> {
    return copy(this.get(path).data);
  }

  async readRange(path: string, offset: number, length: number): Promise<Uint8Array> {
    validateRangeArgs(path, offset, length);
    const { data } = this.get(path);
    const end = clampRange(path, offset, length, data.length);
    return copy(data.subarray(offset, end));
  }

  async stat(path: string): Promise<FileStatus> {
    const obj = this.get(path);
    return { path, size: obj.data.length, lastModified: obj.lastModified };
  }

  async exists(path: string): Promise<boolean> {
    const { store, key } = this.locate(path);
    return store.has(key);
  }

  async write(path: string, data: Uint8Array | string): Promise<void> {
    const { store, key } = this.locate(path);
    // Copy so later mutation of the caller's buffer cannot change the stored object.
    store.set(key, { data: copy(toBytes(data)), lastModified: new Date() });
  }

  async createIfAbsent(path: string, data: Uint8Array | string): Promise<CreateResult> {
    const { store, key } = this.locate(path);
    if (store.has(key)) return 'already-exists';
    store.set(key, { data: copy(toBytes(data)), lastModified: new Date() });
    return 'created';
  }

  async delete(path: string): Promise<void> {
    const { store, key } = this.locate(path);
    store.delete(key);
  }

  async deleteMany(paths: Iterable<string> | AsyncIterable<string>): Promise<number> {
    let n = 0;
    for await (const path of paths) {
      await this.delete(path);
      n++;
    }
    return n;
  }

  async *list(dir: string, options?: ListOptions): AsyncIterable<FileStatus> {
    const recursive = options?.recursive ?? true;
    const { store, key } = this.locate(dir);
    const prefix = key === '' || key.endsWith('/') ? key : `${key}/`;
    // Snapshot the matching keys so concurrent writes cannot break iteration; sorted like S3 listings.
    const keys = [...store.keys()].filter((k) => k.startsWith(prefix)).sort();
    for (const k of keys) {
      const rest = k.slice(prefix.length);
      if (rest === '' || (!recursive && rest.includes('/'))) continue;
      const obj = store.get(k);
      if (!obj) continue;
      yield { path: joinPath(dir, rest), size: obj.data.length, lastModified: obj.lastModified };
    }
  }

  async close(): Promise<void> {}
}

/**
 * A copy with its own ArrayBuffer. (`Buffer#slice` returns a view, so `.slice()` would share the
 * caller's memory, and a reader that transfers the buffer to a worker would detach the store's.)
 */
function copy(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(bytes);
}
