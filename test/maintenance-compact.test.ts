/**
 * Append-table compaction and manifest compaction against the real S3 server: rows survive exactly
 * (checksum over every value), the file and manifest counts drop, and a compaction racing an
 * appending writer keeps every appended row exactly once.
 */
import { describe, expect, it } from 'vitest';
import { compactAppendTable, compactManifests } from '@tidemark/maintenance';
import {
  TYPED_SPEC,
  checksum,
  createTable,
  filesOfAllSnapshots,
  liveFiles,
  manifestCount,
  parquetFilesOnDisk,
  tableRows,
  typedRow,
} from '../packages/maintenance/test/compact-helpers.js';
import { s3Available } from './support/s3.js';
import { onS3Warehouse } from './support/table-locations.js';

const s3 = s3Available('maintenance compaction on S3');

describe('compaction on S3', () => {
  (s3 ? it : it.skip)(
    'compacts small files and manifests with exact rows while a writer keeps appending',
    async () => {
      await onS3Warehouse('maintenance-compact', async (fileIO, warehouse) => {
        const table = await createTable(TYPED_SPEC, { fileIO, warehouse });
        let next = 0;
        for (let c = 0; c < 8; c++) {
          const rows = [];
          for (const dt of ['a', 'b']) for (let k = 0; k < 5; k++) rows.push(typedRow(next++, dt));
          await table.append(rows);
        }
        const before = await checksum(table);
        expect(await liveFiles(table)).toHaveLength(16);

        // Compaction of partition a alone, exact rows, other partition untouched.
        const filesB = (await liveFiles(table)).filter((f) => f.startsWith('dt=b/'));
        const s1 = await compactAppendTable(table, { partition: { dt: 'a' } });
        expect(s1.filesBefore).toBe(8);
        expect(s1.filesAfter).toBe(1);
        expect(await checksum(table)).toEqual(before);
        expect((await liveFiles(table)).filter((f) => f.startsWith('dt=b/'))).toEqual(filesB);

        // Compaction racing an appending writer.
        const start = next;
        const appender = (async () => {
          for (let c = 0; c < 6; c++) await table.append([typedRow(next++, 'b'), typedRow(next++, 'a')]);
        })();
        const [s2] = await Promise.all([compactAppendTable(table), appender]);
        expect(s2.snapshotId !== null || s2.gaveUp !== undefined).toBe(true);
        const ids = (await tableRows(table)).map((r) => (JSON.parse(r) as string[])[0]!);
        expect(ids).toHaveLength(next);
        expect(new Set(ids).size).toBe(next);
        for (let i = start; i < next; i++) expect(ids).toContain(`${i}n`);

        // Manifest compaction keeps the live file set.
        const files = await liveFiles(table);
        const rows = await checksum(table);
        const manifests = await manifestCount(table);
        const m = await compactManifests(table);
        expect(m.manifestsBefore).toBe(manifests);
        expect(m.manifestsAfter).toBeLessThan(manifests);
        expect(await liveFiles(table)).toEqual(files);
        expect(await checksum(table)).toEqual(rows);

        // Every data file in the bucket is referenced by some snapshot.
        const referenced = await filesOfAllSnapshots(table);
        for (const name of await parquetFilesOnDisk(table)) expect(referenced.has(name)).toBe(true);
      });
    },
    300_000,
  );
});
