/**
 * The primary-key table of the changelog and streaming benchmarks: `k INT NOT NULL` (the key),
 * `v STRING`, `n BIGINT`, 2 buckets, with the changelog producer under test.
 */
import { columns, createBenchTable } from './bench-tables.mjs';

/** Creates `tableName` in the warehouse at `warehouse` (through `io`) and opens it. */
export async function createUpsertTable(core, io, warehouse, tableName, producer) {
  return createBenchTable(core, io, warehouse, tableName, {
    fields: columns('k INT NOT NULL', 'v STRING', 'n BIGINT'),
    primaryKeys: ['k'],
    options: { bucket: '2', 'changelog-producer': producer },
  });
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
