/**
 * The primary-key table of the changelog and streaming benchmarks: `k INT NOT NULL` (the key),
 * `v STRING`, `n BIGINT`, 2 buckets, with the changelog producer under test.
 */

/** Creates `tableName` in the warehouse at `warehouse` (through `io`) and opens it. */
export async function createUpsertTable(core, io, warehouse, tableName, producer) {
  const catalog = new core.FileSystemCatalog(warehouse, { fileIO: io });
  await catalog.createTable(tableName, {
    fields: [
      { name: 'k', type: 'INT NOT NULL' },
      { name: 'v', type: 'STRING' },
      { name: 'n', type: 'BIGINT' },
    ],
    primaryKeys: ['k'],
    options: { bucket: '2', 'changelog-producer': producer },
  });
  return core.openTable(catalog.tableLocation(tableName), { fileIO: io });
}
