/**
 * Copies of the Java-written fixture tables on a storage backend, for suites that write into them
 * (the fixtures themselves are shared and must never change).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { openTable, type Table } from '@tidemark/core';
import type { BackendWarehouse, StorageBackend } from './backends.js';

/** Copies every file below the local directory `from` to `to` (a location on the warehouse's store). */
export async function copyTree(from: string, to: string, warehouse: BackendWarehouse): Promise<void> {
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else await warehouse.io.write(`${to}/${relative(from, p)}`, new Uint8Array(await readFile(p)));
    }
  };
  await walk(from);
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
