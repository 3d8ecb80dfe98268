/**
 * The maintenance commands through `main()` on a table on the real S3 server (the CLI resolves
 * S3 from the AWS_* environment, set here from the test server's settings): expiration with a
 * `--json` summary and identical retained snapshots and tags, and orphan cleanup that lists a
 * planted orphan in a dry run, then deletes it. Skips with a notice when no server is configured.
 */
import { describe, expect, it } from 'vitest';
import { SnapshotManager, createTag, openTable, type Table } from '@tidemark/core';
import { s3Available } from './support/s3.js';
import { onS3Table } from './support/table-locations.js';
import { runMain, useCliS3Env } from './support/cli-main.js';

async function rows(table: Table, at: { snapshotId?: number; tag?: string } = {}): Promise<string[]> {
  return (await table.newRead(at).toArrowTable())
    .toArray()
    .map((r) => JSON.stringify(r.toJSON()))
    .sort();
}

const available = s3Available('maintenance CLI on S3');
useCliS3Env();

describe('maintenance commands on S3', () => {
  (available ? it : it.skip)(
    'expire-snapshots --json and remove-orphan-files --dry-run / real run',
    async () => {
      await onS3Table('maintenance-cli', { fields: [{ name: 'id', type: 'INT' }] }, async (table, io) => {
        const location = table.location;
        for (let i = 1; i <= 6; i++) expect((await table.append([{ id: i }])).status).toBe('committed');
        await createTag(io, table.paths, 'first', { snapshotId: 1 });
        expect((await table.overwrite([{ id: 100 }])).status).toBe('committed'); // 7
        const before = new Map<string, string[]>();
        for (const id of [5, 6, 7]) before.set(`s${id}`, await rows(table, { snapshotId: id }));
        before.set('tag', await rows(table, { tag: 'first' }));

        const r = await runMain(['expire-snapshots', location, '--retain-min', '3', '--older-than', '0', '--json']);
        expect(r.code, r.stderr).toBe(0);
        expect(JSON.parse(r.stdout)).toMatchObject({ snapshotsExpired: 4, earliestSnapshotId: 5, dryRun: false });
        expect(await new SnapshotManager(io, table.paths).sortedIds()).toEqual([5, 6, 7]);
        const after = await openTable(location, { fileIO: io });
        for (const id of [5, 6, 7]) expect(await rows(after, { snapshotId: id })).toEqual(before.get(`s${id}`));
        expect(await rows(after, { tag: 'first' })).toEqual(before.get('tag'));

        // S3 sets lastModified itself, so the orphan is young: --older-than 0 (now) makes it eligible.
        const orphan = `${location}/bucket-0/data-orphan-s3.parquet`;
        await io.write(orphan, new Uint8Array(777));
        const dry = await runMain(['remove-orphan-files', location, '--older-than', '0', '--dry-run']);
        expect(dry.code, dry.stderr).toBe(0);
        expect(dry.stdout).toContain(`777\t${orphan}\n`);
        expect(await io.exists(orphan)).toBe(true);
        const real = await runMain(['remove-orphan-files', location, '--older-than', '0', '--json']);
        expect(real.code, real.stderr).toBe(0);
        expect(JSON.parse(real.stdout)).toMatchObject({ filesDeleted: 1, bytesFreed: 777 });
        expect(await io.exists(orphan)).toBe(false);
        expect(await rows(await openTable(location, { fileIO: io }))).toEqual(before.get('s7'));
      });
    },
    300_000,
  );
});
