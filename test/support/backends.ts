/**
 * Storage backends for suites that run one body against local disk and the real S3 server:
 *
 * ```ts
 * describe.each(storageBackends('my suite'))('$name', (backend) => { … backend.open() … });
 * ```
 *
 * The S3 backend is marked unavailable (and `s3Available` prints its visible skip notice) when no
 * server is configured; guard the body with `describe.skipIf(!backend.available)` or similar.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalFileIO, S3FileIO, type FileIO } from '@tidemark/storage';
import { s3Available, s3TestOptions, s3TestRoot } from './s3.js';

/** A warehouse location on one backend, with the FileIO to reach it. */
export interface BackendWarehouse {
  readonly io: FileIO;
  /** Root location for this suite (a fresh temp dir or S3 prefix). */
  readonly root: string;
  /** Deletes everything under `root` and releases the FileIO. */
  cleanup(): Promise<void>;
}

export interface StorageBackend {
  readonly name: 'local disk' | 'S3';
  readonly available: boolean;
  open(): Promise<BackendWarehouse>;
}

/** Local disk always; S3 when a server is configured (else listed as unavailable, with a notice). */
export function storageBackends(suite: string): StorageBackend[] {
  const slug = suite.replace(/[^A-Za-z0-9]+/g, '-').toLowerCase();
  return [
    {
      name: 'local disk',
      available: true,
      async open() {
        const dir = await mkdtemp(join(tmpdir(), `tidemark-${slug}-`));
        return { io: new LocalFileIO(), root: dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
      },
    },
    {
      name: 'S3',
      available: s3Available(`${suite} on S3`),
      async open() {
        const io = new S3FileIO(s3TestOptions());
        const root = s3TestRoot(slug);
        return {
          io,
          root,
          async cleanup() {
            try {
              const paths = async function* (): AsyncGenerator<string> {
                for await (const st of io.list(root)) yield st.path;
              };
              await io.deleteMany(paths());
            } finally {
              await io.close();
            }
          },
        };
      },
    },
  ];
}
