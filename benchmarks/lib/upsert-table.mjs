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

/**
 * The `rows` upserts of commit `commit`: keys spread over 4 × rows, so later commits update earlier
 * keys. With `deletes`, every 20th row of a commit after the first deletes its key instead, and
 * every row names its kind (`op`).
 */
export function upsertRows(commit, rows, { deletes = false } = {}) {
  const out = [];
  const space = rows * 4;
  for (let i = 0; i < rows; i++) {
    const k = (commit * 7919 + i * 13) % space;
    const row = { k, v: `c${commit}-r${i}`, n: BigInt(i) };
    if (!deletes) out.push(row);
    else out.push(i % 20 === 19 && commit > 0 ? { k, v: null, n: null, op: '-D' } : { ...row, op: '+U' });
  }
  return out;
}
