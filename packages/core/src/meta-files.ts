/**
 * Small helpers for the table's metadata directories (`snapshot/`, `schema/`, `tag/`): listing file
 * names and reading files that may legitimately be missing.
 */
import { NotFoundError, type FileIO } from '@tidemark/storage';

/** Streams the base names of the files directly in `dir`, in listing order. */
export async function* listFileNames(fileIO: FileIO, dir: string): AsyncGenerator<string> {
  for await (const status of fileIO.list(dir, { recursive: false })) {
    yield status.path.slice(status.path.lastIndexOf('/') + 1);
  }
}

/** Reads `path`; null when it does not exist. Other errors still throw. */
export async function readIfExists(fileIO: FileIO, path: string): Promise<Uint8Array | null> {
  try {
    return await fileIO.read(path);
  } catch (e) {
    if (e instanceof NotFoundError) return null;
    throw e;
  }
}
