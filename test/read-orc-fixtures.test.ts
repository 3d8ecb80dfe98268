/**
 * A Java-written Paimon table with ORC data files and ORC manifests (`orc-pk-mor`, same history as
 * the Parquet/Avro `pk-mor`), read through @tidemark/core from local disk and from the S3 server;
 * its reads and manifest entries agree with those of the Parquet/Avro copy.
 */
import { readFileSync } from 'node:fs';
import { cp, mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalFileIO, type FileIO } from '@tidemark/storage';
import { openTable, type ReadOptions } from '@tidemark/core';
import { CorruptFileError, readManifestEntries, readManifestList, parseSnapshot, type ManifestEntry } from '@tidemark/format';
import { PK_MOR_LATEST, PK_MOR_SNAPSHOT_2, sortedRows, sortedTableRows } from './support/fixture-rows.js';
import { uploadForSuite } from './support/fixture-copy.js';
import { fixturesDir, sharedFixturesDir } from './support/fixtures.js';
import { s3Available } from './support/s3.js';

const orcFixtures = sharedFixturesDir('paimon-orc', 'ORC table reads (read-orc-fixtures.test.ts)');
const parquetFixtures = fixturesDir('ORC vs Parquet comparison (read-orc-fixtures.test.ts)');
const ORC_TABLE = 'orc-pk-mor/default.db/pk_table_scan_and_read_mor';
const PARQUET_TABLE = 'pk-mor/default.db/pk_table_scan_and_read_mor';

function defineReads(root: () => string, openOptions: () => Parameters<typeof openTable>[1] = () => ({})) {
  const read = async (options: ReadOptions = {}) => {
    const t = await openTable(`${root()}/${ORC_TABLE}`, openOptions());
    return t.newRead(options).toArrowTable();
  };

  it('latest snapshot (5): the 11 merged rows', async () => {
    const t = await read();
    expect(t.schema.fields.map((f) => f.name)).toEqual(['f0', 'f1', 'f2', 'f3']);
    expect(sortedTableRows(t)).toEqual(sortedRows(PK_MOR_LATEST));
  });

  it('snapshot 2: 8 rows (Tony deleted, Alice updated)', async () => {
    expect(sortedTableRows(await read({ snapshotId: 2 }))).toEqual(sortedRows(PK_MOR_SNAPSHOT_2));
  });

  it('snapshot 5 restricted by a filter and a projection', async () => {
    const t = await read({ snapshotId: 5, where: 'f1 = 10 AND f2 = 0', columns: ['f3', 'f0'] });
    expect(t.schema.fields.map((f) => f.name)).toEqual(['f3', 'f0']);
    const expected = PK_MOR_LATEST.filter((r) => r[1] === 10 && r[2] === 0).map((r) => [r[3], r[0]]);
    expect(sortedTableRows(t)).toEqual(sortedRows(expected));
  });
}

describe.skipIf(orcFixtures === null)('ORC table from local disk', () => {
  defineReads(() => orcFixtures!);
});

/** The parts of an entry that do not depend on the file format or the moment of writing. */
function comparable(e: ManifestEntry): unknown {
  const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
  return [
    e.kind,
    hex(e.partition),
    e.bucket,
    e.totalBuckets,
    e.file.rowCount,
    e.file.level,
    hex(e.file.minKey),
    hex(e.file.maxKey),
    hex(e.file.keyStats.minValues),
    hex(e.file.keyStats.maxValues),
    e.file.keyStats.nullCounts,
    hex(e.file.valueStats.minValues),
    hex(e.file.valueStats.maxValues),
    e.file.valueStats.nullCounts,
    String(e.file.minSequenceNumber),
    String(e.file.maxSequenceNumber),
    e.file.schemaId,
    e.file.deleteRowCount,
    e.file.fileSource,
  ];
}

async function deltaEntries(io: FileIO, table: string, snapshotId: number): Promise<unknown[]> {
  const path = `${table}/snapshot/snapshot-${snapshotId}`;
  const snapshot = parseSnapshot(await io.read(path), path);
  const out: unknown[] = [];
  for (const m of await readManifestList(io, `${table}/manifest/${snapshot.deltaManifestList}`)) {
    for await (const e of readManifestEntries(io, `${table}/manifest/${m.fileName}`)) out.push(comparable(e));
  }
  return out.sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
}

describe.skipIf(orcFixtures === null || parquetFixtures === null)('ORC and Parquet copies of the same table agree', () => {
  for (const snapshotId of [1, 2, 3, 4, 5]) {
    it(`snapshot ${snapshotId}: the same rows, and ORC manifests decode to the same entries as the Avro ones`, async () => {
      const orc = await openTable(`${orcFixtures}/${ORC_TABLE}`);
      const parquet = await openTable(`${parquetFixtures}/${PARQUET_TABLE}`);
      const orcRows = sortedTableRows(await orc.newRead({ snapshotId }).toArrowTable());
      expect(orcRows.length).toBeGreaterThan(0);
      expect(orcRows).toEqual(sortedTableRows(await parquet.newRead({ snapshotId }).toArrowTable()));
      const io = new LocalFileIO();
      const orcEntries = await deltaEntries(io, `${orcFixtures}/${ORC_TABLE}`, snapshotId);
      expect(orcEntries.length).toBeGreaterThan(0);
      expect(orcEntries).toEqual(await deltaEntries(io, `${parquetFixtures}/${PARQUET_TABLE}`, snapshotId));
    });
  }
});

describe.skipIf(orcFixtures === null)('damaged ORC files of a table', () => {
  it('a truncated ORC data file and a garbage ORC manifest fail with errors naming the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tidemark-orc-damaged-'));
    try {
      await cp(join(orcFixtures!, 'orc-pk-mor'), join(dir, 'orc-pk-mor'), { recursive: true });
      const table = join(dir, ORC_TABLE);
      const data = join(table, 'f1=20', 'bucket-0', 'data-1bd5fd24-4e7d-4ea2-9436-86df0a54b14a-0.orc');
      await truncate(data, 500);
      const read = async () => (await openTable(table)).newRead().toArrowTable();
      const err = await read().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(CorruptFileError);
      expect((err as Error).message).toContain(data);
      expect((err as Error).message).toMatch(/the file is 500 bytes, but its manifest entry records 901/);

      const manifest = join(table, 'manifest', 'manifest-c40c252b-8f6b-4a24-9df9-d7d8bcd858a0-0');
      const original = readFileSync(manifest);
      await writeFile(manifest, Buffer.concat([original.subarray(0, 3), Buffer.alloc(original.length - 3, 0x41)]));
      const err2 = await read().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err2).toBeInstanceOf(CorruptFileError);
      expect((err2 as Error).message).toContain(manifest);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

const withS3 = orcFixtures !== null && s3Available('ORC table reads from S3 (read-orc-fixtures.test.ts)');

describe.skipIf(!withS3)('ORC table uploaded to S3', () => {
  const s3 = uploadForSuite('read-orc-fixtures', () => join(orcFixtures!, 'orc-pk-mor'), 'orc-pk-mor');
  defineReads(
    () => s3.root,
    () => ({ fileIO: s3.io }),
  );
});
