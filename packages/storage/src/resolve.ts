import type { FileIO } from './file-io.js';
import { LocalFileIO } from './local-file-io.js';
import { MemoryFileIO } from './memory-file-io.js';
import { parseLocation } from './path.js';
import { S3FileIO } from './s3-file-io.js';
import type { S3Options } from './s3-config.js';

/** Settings of {@link resolveFileIO}. */
export interface ResolveFileIOOptions {
  /** Settings for `s3://` locations (see {@link resolveS3Config} for the fallbacks). */
  readonly s3?: S3Options;
}

/**
 * Returns the FileIO for a location's scheme: plain paths and `file://` → {@link LocalFileIO},
 * `s3://` → {@link S3FileIO}, `memory://` → {@link MemoryFileIO}. S3 FileIOs with the same resolved
 * configuration share one S3 client; each returned FileIO should still be closed by its user.
 *
 * @throws StorageConfigError for an unsupported scheme or invalid S3 settings.
 */
export function resolveFileIO(location: string, options: ResolveFileIOOptions = {}): FileIO {
  const { scheme } = parseLocation(location);
  switch (scheme) {
    case 'file':
      return new LocalFileIO();
    case 'memory':
      return new MemoryFileIO();
    case 's3':
      return new S3FileIO(options.s3 ?? {});
  }
}
