/**
 * DOUBLE primary keys in Java's order (`Double.compare`), on local disk and on the S3 server,
 * through the CLI commands a user runs: a NaN key sorts after every number, so a deleted key stays
 * deleted through a full compaction; all NaNs are one key (whatever their bits, in the sort and in
 * the bucket hash); -0.0 and 0.0 are two keys.
 */
import * as arrow from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTable } from '@tidemark/core';
import { storageBackends, type BackendWarehouse } from './support/backends.js';
import { runMain, useCliS3Env, type MainResult } from './support/cli-main.js';

useCliS3Env();

const SCHEMA = '[{"name":"k","type":"DOUBLE NOT NULL"},{"name":"v","type":"STRING"}]';
const jsonl = (rows: object[]): string => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

/** `tidemark <argv>` in this process; fails the test with its output unless it exits 0. */
async function ok(argv: string[], stdin?: string): Promise<MainResult> {
  const r = await runMain(argv, stdin === undefined ? {} : { stdin });
  expect(r.code, `tidemark ${argv.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(0);
  return r;
}

/** The rows (k, v) of a table or snapshot, in the order the read returns them. */
async function rows(warehouse: BackendWarehouse, table: string, snapshotId?: number): Promise<Array<[number, string | null]>> {
  // Not closed: the table would close the warehouse's FileIO with it.
  const t = await openTable(table, { fileIO: warehouse.io });
  const out = await t.newRead(snapshotId === undefined ? {} : { snapshotId }).toArrowTable();
  const k = out.getChild('k')!;
  const v = out.getChild('v')!;
  return Array.from({ length: out.numRows }, (_, i) => [k.get(i) as number, v.get(i) as string | null]);
}

/** A one-column Float64 batch whose values are given as raw IEEE-754 bits (NaN payloads survive). */
function doublesFromBits(bits: bigint[], v: string): arrow.Table {
  const k = new Float64Array(new BigUint64Array(bits).buffer);
  return new arrow.Table({
    k: arrow.makeVector(k),
    v: arrow.vectorFromArray(
      bits.map(() => v),
      new arrow.Utf8(),
    ),
  });
}

describe.each(storageBackends('float primary keys'))('DOUBLE primary keys in Java order ($name)', (backend) => {
  let warehouse: BackendWarehouse;
  beforeAll(async () => {
    if (backend.available) warehouse = await backend.open();
  });
  afterAll(async () => {
    await warehouse?.cleanup();
  });

  it.skipIf(!backend.available)('a deleted key next to a NaN key stays deleted through compact --full, and verify passes', async () => {
    const t = `${warehouse.root}/db.db/nan_delete`;
    await ok(['create', t, '--schema', SCHEMA, '--primary-key', 'k', '--option', 'bucket=1']);
    await ok(
      ['write', t],
      jsonl([
        { k: 'NaN', v: 'nan' },
        { k: 1.5, v: 'a' },
        { k: 2.5, v: 'b' },
      ]),
    );
    // The written file is in Java's key order: NaN after every number.
    expect(await rows(warehouse, t, 1)).toEqual([
      [1.5, 'a'],
      [2.5, 'b'],
      [NaN, 'nan'],
    ]);
    await ok(['delete', t, '--where', 'k = 1.5']);
    await ok(['write', t], jsonl([{ k: 2.5, v: 'b2' }]));
    await ok(['compact', t, '--full']);
    await ok(['verify', t]);
    expect(await rows(warehouse, t)).toEqual([
      [2.5, 'b2'],
      [NaN, 'nan'],
    ]);
  });

  it.skipIf(!backend.available)('two NaN rows written together are one key; -0.0 and 0.0 are two keys', async () => {
    const t = `${warehouse.root}/db.db/nan_zero`;
    await ok(['create', t, '--schema', SCHEMA, '--primary-key', 'k', '--option', 'bucket=4']);
    // Written out by hand: JSON.stringify prints -0 as 0.
    await ok(
      ['write', t],
      ['{"k":"NaN","v":"first"}', '{"k":-0.0,"v":"negative zero"}', '{"k":"NaN","v":"second"}', '{"k":0.0,"v":"zero"}', ''].join('\n'),
    );
    const got = await rows(warehouse, t);
    expect(got).toHaveLength(3);
    const byKey = new Map(got.map(([k, v]) => [Object.is(k, -0) ? '-0' : String(k), v]));
    expect(byKey).toEqual(
      new Map([
        ['NaN', 'second'],
        ['-0', 'negative zero'],
        ['0', 'zero'],
      ]),
    );
  });

  it.skipIf(!backend.available)('NaNs of other bit patterns are the same key, in the same bucket', async () => {
    const t = `${warehouse.root}/db.db/nan_bits`;
    await ok(['create', t, '--schema', SCHEMA, '--primary-key', 'k', '--option', 'bucket=4']);
    const table = await openTable(t, { fileIO: warehouse.io });
    // Java's Double.NaN, a NaN with a payload, a negative NaN: one key, whatever bucket Java puts it in.
    await table.append(doublesFromBits([0x7ff8000000000000n, 1n << 62n], 'java nan and one'));
    await table.append(doublesFromBits([0x7ff8000000000001n], 'payload nan'));
    await table.append(doublesFromBits([0xfff8000000000000n], 'negative nan'));
    // Buckets are read one after another: order the rows as Java orders the keys (NaN last).
    const got = (await rows(warehouse, t)).sort(([a], [b]) => (Number.isNaN(a) ? 1 : Number.isNaN(b) ? -1 : a - b));
    expect(got).toEqual([
      [2, 'java nan and one'],
      [NaN, 'negative nan'],
    ]);
  });
});
