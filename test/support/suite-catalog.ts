/**
 * The warehouse most backend suites open: a {@link FileSystemCatalog} at `<root>/wh` on one
 * {@link StorageBackend}, opened before the suite's tests and deleted after them.
 *
 * ```ts
 * describe.skipIf(!backend.available)(`(${backend.name})`, () => {
 *   const env = suiteCatalog(backend);
 *   it('…', async () => { await env.catalog.createTable(…); env.wh.io … });
 * });
 * ```
 */
import { afterAll, beforeAll } from 'vitest';
import { FileSystemCatalog } from '@tidemark/core';
import type { BackendWarehouse, StorageBackend } from './backends.js';

/** The suite's warehouse and catalog; read them inside tests and hooks (they exist from `beforeAll` on). */
export interface SuiteCatalog {
  readonly wh: BackendWarehouse;
  readonly catalog: FileSystemCatalog;
}

/** Registers the suite's `beforeAll`/`afterAll` that open and delete its warehouse on `backend`. */
export function suiteCatalog(backend: StorageBackend): SuiteCatalog {
  let wh: BackendWarehouse | undefined;
  let catalog: FileSystemCatalog | undefined;
  beforeAll(async () => {
    wh = await backend.open();
    catalog = new FileSystemCatalog(`${wh.root}/wh`, { fileIO: wh.io });
  });
  afterAll(async () => {
    await wh?.cleanup();
  });
  const opened = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error(`the ${backend.name} warehouse is used before the suite's beforeAll opened it`);
    return value;
  };
  return {
    get wh() {
      return opened(wh);
    },
    get catalog() {
      return opened(catalog);
    },
  };
}
