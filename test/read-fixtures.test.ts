/**
 * Every expectation of ../shared/fixtures/paimon/README.md, read through the public API of
 * @tidemark/core from local disk and — when an S3 server is configured — from S3 after uploading
 * the fixture tables.
 */
import { describe, expect, it } from 'vitest';
import { openTable, type ReadOptions } from '@tidemark/core';
import { PK_DV_LATEST, PK_MOR_LATEST, PK_MOR_SNAPSHOT_2, sortedRows, sortedTableRows } from './support/fixture-rows.js';
import { uploadForSuite } from './support/fixture-copy.js';
import { fixturesDir } from './support/fixtures.js';
import { s3Available } from './support/s3.js';

const fixtures = fixturesDir('fixture read tests (read-fixtures.test.ts)');

const TABLES = {
  pkMor: 'pk-mor/default.db/pk_table_scan_and_read_mor',
  pkDv: 'pk-dv/default.db/pk_table_scan_and_read_dv',
  appendEvo: 'append-schema-evolution/default.db/append_table_with_alter_table',
} as const;

const PK_MOR_S5_F1_10_BUCKET_1 = ['Bob', 'David', 'Emily', 'Marco', 'Marco2', 'Skye', 'Skye2'];

const APPEND_S2 = [
  [0, 1, 16, 13, null, 15, null],
  [0, 1, 26, 23, null, 25, null],
  [0, 1, 36, 33, null, 35, null],
  [0, 1, 66, 63, 517, 65, 618],
  [0, 1, 76, 73, 527, 75, 628],
  [0, 1, 86, 83, 537, 85, 638],
  [1, 1, 46, 43, null, 45, null],
  [1, 1, 56, 53, null, 55, null],
  [1, 1, 96, 93, 547, 95, 648],
  [1, 1, 106, 103, 557, 105, 658],
];

const APPEND_S1 = [
  [0, 1, 12, 13, 14, 15, 16],
  [0, 1, 22, 23, 24, 25, 26],
  [0, 1, 32, 33, 34, 35, 36],
  [1, 1, 42, 43, 44, 45, 46],
  [1, 1, 52, 53, 54, 55, 56],
];

/** The expectations, run against a warehouse root (local dir or s3:// prefix). */
function defineExpectations(root: () => string, openOptions: () => Parameters<typeof openTable>[1] = () => ({})) {
  const read = async (table: string, options: ReadOptions = {}) => {
    const t = await openTable(`${root()}/${table}`, openOptions());
    return t.newRead(options).toArrowTable();
  };

  it('pk-mor latest snapshot (5): 11 merged rows', async () => {
    const t = await read(TABLES.pkMor);
    expect(t.schema.fields.map((f) => f.name)).toEqual(['f0', 'f1', 'f2', 'f3']);
    expect(sortedTableRows(t)).toEqual(sortedRows(PK_MOR_LATEST));
  });

  it('pk-mor snapshot 2: 8 rows (Tony deleted, Alice updated)', async () => {
    expect(sortedTableRows(await read(TABLES.pkMor, { snapshotId: 2 }))).toEqual(sortedRows(PK_MOR_SNAPSHOT_2));
  });

  it('pk-mor snapshot 5 restricted to partition f1=10, bucket 1: 7 rows', async () => {
    const t = await read(TABLES.pkMor, { snapshotId: 5, partition: { f1: '10' }, bucket: 1 });
    expect(
      sortedTableRows(t)
        .map((r) => r[0] as string)
        .sort(),
    ).toEqual([...PK_MOR_S5_F1_10_BUCKET_1].sort());
    // Same rows through a filter (f2 = 0 hashes to bucket 1).
    const viaWhere = await read(TABLES.pkMor, { snapshotId: 5, where: 'f1 = 10 AND f2 = 0' });
    expect(sortedTableRows(viaWhere)).toEqual(sortedTableRows(t));
  });

  it('pk-dv latest snapshot (6): 8 rows, level-0 files of snapshots 5/6 invisible', async () => {
    expect(sortedTableRows(await read(TABLES.pkDv))).toEqual(sortedRows(PK_DV_LATEST));
  });

  it('append-schema-evolution snapshot 2 with schema-1 columns: 10 rows, nulls for added columns', async () => {
    const t = await read(TABLES.appendEvo, { snapshotId: 2 });
    expect(t.schema.fields.map((f) => f.name)).toEqual(['key0', 'key1', 'k', 'c', 'd', 'a', 'e']);
    expect(sortedTableRows(t)).toEqual(sortedRows(APPEND_S2));
  });

  it('append-schema-evolution snapshot 1 with schema-0 columns: 5 rows', async () => {
    const t = await read(TABLES.appendEvo, { snapshotId: 1 });
    expect(t.schema.fields.map((f) => f.name)).toEqual(['key0', 'key1', 'a', 'b', 'c', 'd', 'k']);
    expect(sortedTableRows(t)).toEqual(sortedRows(APPEND_S1));
  });
}

describe.skipIf(fixtures === null)('Paimon fixtures from local disk', () => {
  defineExpectations(() => fixtures!);
});

const withS3 = fixtures !== null && s3Available('fixture reads from S3 (read-fixtures.test.ts)');

describe.skipIf(!withS3)('Paimon fixtures uploaded to S3', () => {
  const s3 = uploadForSuite(
    'read-fixtures',
    () => fixtures!,
    '',
    (f) => !f.endsWith('README.md'),
  );
  defineExpectations(
    () => s3.root,
    () => ({ fileIO: s3.io }),
  );
});
