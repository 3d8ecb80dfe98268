/**
 * Copies of the Java-written fixture tables on a storage backend, for suites that write into them
 * (the fixtures themselves are shared and must never change).
 */
import { cp, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { afterAll, beforeAll, onTestFinished } from 'vitest';
import { openTable, type Table } from '@tidemark/core';
import { S3FileIO, type FileIO } from '@tidemark/storage';
import type { BackendWarehouse, StorageBackend } from './backends.js';
import { s3TestOptions, s3TestRoot } from './s3.js';

/**
 * Writes every file below the local directory `from` that `keep` accepts to `to/<its relative path>`
 * on `io`, 16 at a time (the shared fixtures uploaded to the S3 server, or copied to a warehouse).
 */
export async function uploadTree(from: string, to: string, io: FileIO, keep: (file: string) => boolean = () => true): Promise<void> {
  const files: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile() && keep(p)) files.push(p);
    }
  };
  await walk(from);
  for (let i = 0; i < files.length; i += 16) {
    await Promise.all(
      files
        .slice(i, i + 16)
        .map(async (f) => io.write(`${to}/${relative(from, f).split(sep).join('/')}`, new Uint8Array(await readFile(f)))),
    );
  }
}

/** Copies every file below the local directory `from` to `to` (a location on the warehouse's store). */
export async function copyTree(from: string, to: string, warehouse: BackendWarehouse): Promise<void> {
  await uploadTree(from, to, warehouse.io);
}

/** A fresh warehouse on `backend` holding a copy of the fixture table `from` at `<root>/<name>`, opened. */
export async function openFixtureCopy(
  backend: StorageBackend,
  from: string,
  name: string,
): Promise<{ warehouse: BackendWarehouse; table: Table }> {
  const warehouse = await backend.open();
  const location = `${warehouse.root}/${name}`;
  await copyTree(from, location, warehouse);
  return { warehouse, table: await openTable(location, { fileIO: warehouse.io }) };
}

/**
 * Registers the suite's hooks: before its tests, a copy of the fixture table `from()` on `backend`
 * ({@link openFixtureCopy}) handed to `opened`; after them, the copy's warehouse deleted. Nothing is
 * copied when `enabled` is false (the suite skips its tests then).
 */
export function copyFixtureForSuite(
  backend: StorageBackend,
  enabled: boolean,
  from: () => string,
  name: string,
  opened: (copy: { warehouse: BackendWarehouse; table: Table }) => void,
): void {
  let warehouse: BackendWarehouse | undefined;
  beforeAll(async () => {
    if (!enabled) return;
    const copy = await openFixtureCopy(backend, from(), name);
    warehouse = copy.warehouse;
    opened(copy);
  }, 60_000);
  afterAll(async () => {
    await warehouse?.cleanup();
  });
}

/** A copy of the local directory `from` in a fresh temp dir (`prefix` names it), removed when the current test ends. */
export async function tempCopy(from: string, prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  await cp(from, dir, { recursive: true });
  return dir;
}

/**
 * Registers the suite's hooks: before its tests, the local tree `from()` (the files `keep` accepts)
 * uploaded to `<root>/<under>` on the S3 server, `root` a fresh prefix named after `label`; after
 * them, the FileIO closed. Read `io` and `root` inside tests.
 */
export function uploadForSuite(
  label: string,
  from: () => string,
  under = '',
  keep?: (file: string) => boolean,
): { readonly io: FileIO; readonly root: string } {
  let io: FileIO | undefined;
  let root = '';
  beforeAll(async () => {
    io = new S3FileIO(s3TestOptions());
    root = s3TestRoot(label);
    await uploadTree(from(), under === '' ? root : `${root}/${under}`, io, keep);
  });
  afterAll(async () => {
    if (io) await io.close();
  });
  return {
    get io() {
      if (io === undefined) throw new Error(`the S3 upload of ${label} is used before the suite's beforeAll made it`);
      return io;
    },
    get root() {
      return root;
    },
  };
}
