import { randomUUID } from 'node:crypto';
import { promises as fs, type Dirent } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { clampRange, toBytes, validateRangeArgs } from './bytes.js';
import { DeleteManyError, NotFoundError, StorageConfigError, StorageError } from './errors.js';
import type { CreateResult, FileIO, FileStatus, ListOptions } from './file-io.js';
import { joinPath, parseLocation } from './path.js';

/** How many unlinks {@link LocalFileIO.deleteMany} keeps in flight. */
const DELETE_CONCURRENCY = 16;

function errCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : undefined;
}

/**
 * FileIO over the local file system. Accepts plain paths and `file://` URIs.
 *
 * Writes go to a hidden temp file `.<name>.<uuid>.tmp` in the target directory, are fsynced, then
 * published atomically: `rename` for {@link LocalFileIO.write}, `link` (which fails with EEXIST
 * when the target exists) for {@link LocalFileIO.createIfAbsent}. Readers therefore never see a
 * partial file, and exactly one concurrent creator wins, also across processes.
 */
export class LocalFileIO implements FileIO {
  readonly kind = 'local';

  private toFsPath(location: string): string {
    const loc = parseLocation(location);
    if (loc.scheme !== 'file') {
      throw new StorageConfigError(`LocalFileIO only handles plain paths and file:// URIs, got ${location}`);
    }
    return loc.path!;
  }

  private wrap(location: string, err: unknown, op: string): Error {
    if (err instanceof StorageError) return err;
    const code = errCode(err);
    if (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR') return new NotFoundError(location, { cause: err });
    return new StorageError(`Failed to ${op} ${location}: ${(err as Error)?.message ?? String(err)}`, { cause: err });
  }

  async read(path: string): Promise<Uint8Array> {
    try {
      const buf = await fs.readFile(this.toFsPath(path));
      return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    } catch (err) {
      throw this.wrap(path, err, 'read');
    }
  }

  async readRange(path: string, offset: number, length: number): Promise<Uint8Array> {
    validateRangeArgs(path, offset, length);
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(this.toFsPath(path), 'r');
    } catch (err) {
      throw this.wrap(path, err, 'open');
    }
    try {
      const st = await handle.stat();
      if (!st.isFile()) throw new NotFoundError(path);
      const end = clampRange(path, offset, length, st.size);
      const out = new Uint8Array(end - offset);
      let done = 0;
      while (done < out.length) {
        const { bytesRead } = await handle.read(out, done, out.length - done, offset + done);
        if (bytesRead === 0) break; // truncated concurrently
        done += bytesRead;
      }
      return done === out.length ? out : out.subarray(0, done);
    } catch (err) {
      if (err instanceof StorageError) throw err;
      throw this.wrap(path, err, 'read');
    } finally {
      await handle.close();
    }
  }

  async stat(path: string): Promise<FileStatus> {
    let st;
    try {
      st = await fs.stat(this.toFsPath(path));
    } catch (err) {
      throw this.wrap(path, err, 'stat');
    }
    if (!st.isFile()) throw new NotFoundError(path);
    return { path, size: st.size, lastModified: st.mtime };
  }

  async exists(path: string): Promise<boolean> {
    try {
      return (await fs.stat(this.toFsPath(path))).isFile();
    } catch (err) {
      const code = errCode(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') return false;
      throw this.wrap(path, err, 'stat');
    }
  }

  /** Writes `data` to a fresh fsynced temp file next to `target` and returns its path. */
  private async writeTemp(target: string, data: Uint8Array): Promise<string> {
    const dir = dirname(target);
    await fs.mkdir(dir, { recursive: true });
    const tmp = join(dir, `.${basename(target)}.${randomUUID()}.tmp`);
    const handle = await fs.open(tmp, 'wx');
    try {
      await handle.writeFile(data);
      await handle.sync();
    } catch (err) {
      await handle.close().catch(() => {});
      await fs.unlink(tmp).catch(() => {});
      throw err;
    }
    await handle.close();
    return tmp;
  }

  async write(path: string, data: Uint8Array | string): Promise<void> {
    const target = this.toFsPath(path);
    let tmp: string | undefined;
    try {
      tmp = await this.writeTemp(target, toBytes(data));
      await fs.rename(tmp, target);
      tmp = undefined;
      await syncDir(dirname(target));
    } catch (err) {
      if (tmp !== undefined) await fs.unlink(tmp).catch(() => {});
      throw new StorageError(`Failed to write ${path}: ${(err as Error)?.message ?? String(err)}`, { cause: err });
    }
  }

  async createIfAbsent(path: string, data: Uint8Array | string): Promise<CreateResult> {
    const target = this.toFsPath(path);
    let tmp: string | undefined;
    try {
      tmp = await this.writeTemp(target, toBytes(data));
      let result: CreateResult;
      try {
        // link(2) fails atomically with EEXIST when the target exists: the create-if-absent primitive.
        await fs.link(tmp, target);
        result = 'created';
      } catch (err) {
        if (errCode(err) !== 'EEXIST') throw err;
        result = 'already-exists';
      }
      await fs.unlink(tmp);
      tmp = undefined;
      if (result === 'created') await syncDir(dirname(target));
      return result;
    } catch (err) {
      if (tmp !== undefined) await fs.unlink(tmp).catch(() => {});
      const code = errCode(err);
      const hint =
        code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP'
          ? ' (the file system does not support hard links, which atomic create-if-absent needs)'
          : '';
      throw new StorageError(`Failed to create ${path}: ${(err as Error)?.message ?? String(err)}${hint}`, {
        cause: err,
      });
    }
  }

  async delete(path: string): Promise<void> {
    try {
      await fs.unlink(this.toFsPath(path));
    } catch (err) {
      if (errCode(err) === 'ENOENT') return;
      throw new StorageError(`Failed to delete ${path}: ${(err as Error)?.message ?? String(err)}`, { cause: err });
    }
  }

  async deleteMany(paths: Iterable<string> | AsyncIterable<string>): Promise<number> {
    let processed = 0;
    const failures: { path: string; code: string; message: string }[] = [];
    const inFlight = new Set<Promise<void>>();
    try {
      for await (const path of paths) {
        processed++;
        const p: Promise<void> = this.delete(path)
          .catch((err: unknown) => {
            failures.push({ path, code: errCode((err as Error).cause) ?? 'Error', message: (err as Error).message });
          })
          .finally(() => inFlight.delete(p));
        inFlight.add(p);
        if (inFlight.size >= DELETE_CONCURRENCY) await Promise.race(inFlight);
      }
    } finally {
      // Also when the input stream throws: no unlink outlives the call.
      await Promise.all(inFlight);
    }
    if (failures.length > 0) throw new DeleteManyError(processed, failures);
    return processed;
  }

  async *list(dir: string, options?: ListOptions): AsyncIterable<FileStatus> {
    const recursive = options?.recursive ?? true;
    yield* this.walk(dir, this.toFsPath(dir), recursive);
  }

  private async *walk(location: string, fsDir: string, recursive: boolean): AsyncGenerator<FileStatus> {
    let handle;
    try {
      handle = await fs.opendir(fsDir);
    } catch (err) {
      const code = errCode(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') return;
      throw new StorageError(`Failed to list ${location}: ${(err as Error)?.message ?? String(err)}`, { cause: err });
    }
    // Entries stream from the directory handle; `for await` closes it on completion or early return.
    for await (const entry of handle as AsyncIterable<Dirent>) {
      const childFs = join(fsDir, entry.name);
      const child = joinPath(location, entry.name);
      let isDir = entry.isDirectory();
      let isFile = entry.isFile();
      let st;
      if (entry.isSymbolicLink()) {
        st = await fs.stat(childFs).catch(() => undefined);
        isDir = st?.isDirectory() ?? false;
        isFile = st?.isFile() ?? false;
      }
      if (isDir) {
        if (recursive) yield* this.walk(child, childFs, recursive);
        continue;
      }
      if (!isFile) continue;
      st ??= await fs.stat(childFs).catch(() => undefined); // deleted since the directory was read
      if (!st) continue;
      yield { path: child, size: st.size, lastModified: st.mtime };
    }
  }

  async close(): Promise<void> {}
}

/** Makes a rename/link durable. Some platforms cannot fsync a directory; that is not an error there. */
async function syncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await fs.open(dir, 'r');
    await handle.sync();
  } catch (err) {
    const code = errCode(err);
    if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL' && code !== 'EBADF') throw err;
  } finally {
    await handle?.close();
  }
}
