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
import { FileSystemCatalog, openTable, type Table } from '@tidemark/core';
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

const upsertTables = new WeakMap<SuiteCatalog, number>();

/**
 * Creates and opens `db.t<n>` in the suite's catalog (n counting up per suite): the small upsert
 * table of the changelog and sink suites, `k INT NOT NULL` (the primary key) and `v STRING` in 2
 * buckets, with `options` on top.
 */
export async function createUpsertTable(env: SuiteCatalog, options: Readonly<Record<string, string>>): Promise<Table> {
  const n = (upsertTables.get(env) ?? 0) + 1;
  upsertTables.set(env, n);
  const name = `db.t${n}`;
  await env.catalog.createTable(name, {
    fields: [
      { name: 'k', type: 'INT NOT NULL' },
      { name: 'v', type: 'STRING' },
    ],
    primaryKeys: ['k'],
    options: { bucket: '2', ...options },
  });
  return openTable(env.catalog.tableLocation(name), { fileIO: env.wh.io });
}

/** The rows of an upsert table ({@link createUpsertTable}) at `snapshotId`, as sorted `k=v` strings. */
export async function upsertRowsAt(t: Table, snapshotId: number): Promise<string[]> {
  return (await t.newRead({ snapshotId }).toArrowTable())
    .toArray()
    .map((r) => {
      const o = r.toJSON() as { k: number; v: string };
      return `${o.k}=${o.v}`;
    })
    .sort();
}
