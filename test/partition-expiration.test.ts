/**
 * Partition expiration and dropping through the CLI (`main()` in this process, with a fixed clock)
 * on local disk and on the real S3 server: 30 daily partitions expired at 7 days — the dry run
 * lists exactly the 23 older ones and changes nothing, the real run drops them in one OVERWRITE
 * snapshot, the latest snapshot holds the last 7 days while the earlier snapshot still reads all
 * 30, and after snapshot expiration and orphan cleanup the dropped files are gone and `verify` is
 * clean. Also `update-time`, an unparsable partition value, `partitions`, `drop-partition`, and
 * the partition and tag jobs of `maintain`.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openTable, type Table } from '@tidemark/core';
import type { FileIO } from '@tidemark/storage';
import { storageBackends } from './support/backends.js';
import { suiteCatalog } from './support/suite-catalog.js';
import { runMain, useCliS3Env } from './support/cli-main.js';

useCliS3Env();

/** Noon of a June 2024 day, local wall clock: the CLI's "now" in these tests. */
const NOW = new Date(2024, 5, 30, 12).getTime();
const day = (d: number): string => `2024-06-${String(d).padStart(2, '0')}`;
const DAYS = Array.from({ length: 30 }, (_, i) => day(i + 1));
const jsonl = (rows: readonly object[]): string => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

async function objects(io: FileIO, location: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const st of io.list(location)) {
    out.set(
      st.path,
      createHash('sha256')
        .update(await io.read(st.path))
        .digest('hex'),
    );
  }
  return out;
}

async function cli(argv: string[], stdin?: string, now = NOW): Promise<{ code: number; stdout: string; stderr: string }> {
  return runMain(argv, { now: () => now, ...(stdin !== undefined ? { stdin } : {}) });
}

async function json(argv: string[], now = NOW): Promise<Record<string, unknown>> {
  const r = await cli(argv, undefined, now);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

/** Partition values (dt) of the rows of a snapshot, distinct and sorted. */
async function partitionsRead(t: Table, snapshotId?: number): Promise<string[]> {
  const rows = (await t.newRead(snapshotId !== undefined ? { snapshotId } : {}).toArrowTable()).toArray();
  return [...new Set(rows.map((r) => (r.toJSON() as { dt: string }).dt))].sort();
}

/** Data files of a snapshot by partition directory. */
async function dataFiles(t: Table, snapshotId: number): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const split of (await t.newRead({ snapshotId }).plan()).splits) {
    const dir = t.paths.partitionPath(split.partition).replace(/\/$/, '');
    out.set(dir, [...(out.get(dir) ?? []), ...split.files.map((f) => f.path)]);
  }
  return out;
}

describe.each(storageBackends('partition expiration'))('$name', (backend) => {
  describe.skipIf(!backend.available)('expire-partitions', () => {
    const env = suiteCatalog(backend);

    async function daily(name: string, options: Record<string, string> = {}): Promise<string> {
      await env.catalog.createTable(`db.${name}`, {
        fields: [
          { name: 'dt', type: 'STRING NOT NULL' },
          { name: 'id', type: 'INT' },
        ],
        partitionKeys: ['dt'],
        options,
      });
      return env.catalog.tableLocation(`db.${name}`);
    }

    it('30 daily partitions, 7 days: the dry run lists the 23 older ones, the real run drops them, old snapshots still read them until expiration and cleanup', async () => {
      const t = await daily('events');
      const rows = DAYS.flatMap((dt, i) => [
        { dt, id: 2 * i },
        { dt, id: 2 * i + 1 },
      ]);
      expect((await cli(['write', t], jsonl(rows))).code).toBe(0);
      const older = DAYS.slice(0, 23).map((d) => `dt=${d}`);

      const before = await objects(env.wh.io, t);
      const dry = await json(['expire-partitions', t, '--expiration-time', '7d', '--dry-run', '--json']);
      expect(dry).toMatchObject({ dryRun: true, partitionsDropped: 23, records: 46, files: 23, snapshotIds: [], strategy: 'values-time' });
      expect((dry['partitions'] as Array<{ partition: string }>).map((p) => p.partition)).toEqual(older);
      expect(await objects(env.wh.io, t)).toEqual(before);
      const text = await cli(['expire-partitions', t, '--expiration-time', '7d', '--dry-run']);
      expect(text.stdout.split('\n').filter((l) => l.startsWith('would drop dt='))).toHaveLength(23);
      expect(text.stdout).toContain('would drop 23 partition(s) (46 record(s), 23 file(s),');

      const real = await json(['expire-partitions', t, '--expiration-time', '7d', '--json']);
      expect(real).toMatchObject({ dryRun: false, partitionsDropped: 23, records: 46, snapshotIds: [2] });
      expect((real['partitions'] as Array<{ partition: string }>).map((p) => p.partition)).toEqual(older);

      const table = await openTable(t, { fileIO: env.wh.io });
      expect((await table.snapshotManager.snapshot(2)).commitKind).toBe('OVERWRITE');
      expect(await partitionsRead(table)).toEqual(DAYS.slice(23));
      expect(await partitionsRead(table, 1)).toEqual(DAYS);
      const listed = (await cli(['partitions', t, '--json'])).stdout.trim().split('\n');
      expect(listed.map((l) => (JSON.parse(l) as { partition: string }).partition)).toEqual(DAYS.slice(23).map((d) => `dt=${d}`));

      // The dropped partitions' files stay for snapshot 1 until it expires and orphan cleanup runs.
      const dropped = [...(await dataFiles(table, 1)).entries()].filter(([dir]) => older.includes(dir)).flatMap(([, files]) => files);
      expect(dropped).toHaveLength(23);
      for (const f of dropped) expect(await env.wh.io.exists(f)).toBe(true);
      const realNow = Date.now();
      expect(
        (await cli(['expire-snapshots', t, '--retain-min', '1', '--retain-max', '1', '--older-than', '0'], undefined, realNow)).code,
      ).toBe(0);
      expect((await cli(['remove-orphan-files', t, '--older-than', '0'], undefined, realNow)).code).toBe(0);
      for (const f of dropped) expect(await env.wh.io.exists(f)).toBe(false);
      const verify = await cli(['verify', t, '--all'], undefined, realNow);
      expect(verify.stdout, verify.stderr).toMatch(/^ok: /);
      expect(verify.code).toBe(0);
      expect(await partitionsRead(await openTable(t, { fileIO: env.wh.io }))).toEqual(DAYS.slice(23));
    }, 240_000);

    it('update-time drops by the newest file of each partition', async () => {
      const t = await daily('updates', { 'partition.expiration-strategy': 'update-time', 'partition.expiration-time': '2 d' });
      const table = await openTable(t, { fileIO: env.wh.io });
      const now = Date.now();
      for (const [dt, age] of [
        ['stale', 5],
        ['fresh', 0],
        ['touched', 4],
        ['touched', 1],
      ] as const) {
        const w = table.newBatchWrite({ now: () => now - age * 86_400_000 });
        await w.write([{ dt, id: age }]);
        await table.newCommit().commit({ messages: await w.prepareCommit() });
        await w.close();
      }
      const dry = await json(['expire-partitions', t, '--dry-run', '--json'], now);
      expect(dry).toMatchObject({ strategy: 'update-time', expirationTimeMs: 2 * 86_400_000 });
      expect((dry['partitions'] as Array<{ partition: string; time: string }>).map((p) => [p.partition, p.time])).toEqual([
        ['dt=stale', new Date(now - 5 * 86_400_000).toISOString()],
      ]);
      expect((await cli(['expire-partitions', t], undefined, now)).code).toBe(0);
      expect(await partitionsRead(await openTable(t, { fileIO: env.wh.io }))).toEqual(['fresh', 'touched']);
    }, 120_000);

    it('skips a partition value the format cannot read, with a warning naming it, and drops the rest', async () => {
      const t = await daily('mixed');
      expect(
        (
          await cli(
            ['write', t],
            jsonl([
              { dt: '2024-06-01', id: 1 },
              { dt: 'backfill', id: 2 },
              { dt: '2024-06-30', id: 3 },
            ]),
          )
        ).code,
      ).toBe(0);
      const r = await cli(['expire-partitions', t, '--expiration-time', '1d', '--json']);
      expect(r.code).toBe(0);
      expect(r.stderr).toContain('tidemark expire-partitions: warning: partition expiration of');
      expect(r.stderr).toContain("partition 'dt=backfill' is skipped: cannot read a time from 'backfill'");
      const s = JSON.parse(r.stdout) as { partitions: Array<{ partition: string }>; skipped: Array<{ partition: string }> };
      expect(s.partitions.map((p) => p.partition)).toEqual(['dt=2024-06-01']);
      expect(s.skipped.map((p) => p.partition)).toEqual(['dt=backfill']);
      expect(await partitionsRead(await openTable(t, { fileIO: env.wh.io }))).toEqual(['2024-06-30', 'backfill']);
      // The one-off drop removes it, in one commit.
      const drop = await json(['drop-partition', t, '--partition', 'dt=backfill', '--json']);
      expect(drop).toMatchObject({ partitionsDropped: 1, records: 1, snapshotIds: [3] });
      expect(await partitionsRead(await openTable(t, { fileIO: env.wh.io }))).toEqual(['2024-06-30']);
      const missing = await cli(['drop-partition', t, '--partition', 'dt=backfill']);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('no partition of');
      expect(missing.stderr).toContain("matches 'dt=backfill'; partitions: dt=2024-06-30");
    }, 120_000);

    it('maintain expires the partitions of tables that set partition.expiration-time, creates their tags, and changes nothing in a dry run', async () => {
      const t = await daily('maintained', { 'partition.expiration-time': '7 d' });
      const plain = await daily('plain');
      expect((await cli(['write', t], jsonl(DAYS.map((dt, id) => ({ dt, id }))))).code).toBe(0);
      expect((await cli(['write', plain], jsonl(DAYS.map((dt, id) => ({ dt, id }))))).code).toBe(0);
      // Turned on after the data was written: the commits made no tag, maintain makes it.
      expect((await cli(['alter', t, 'set-option', 'tag.automatic-creation=process-time'])).code).toBe(0);
      const before = await objects(env.wh.io, t);
      const dry = await json(['maintain', t, plain, '--dry-run', '--json']);
      expect(await objects(env.wh.io, t)).toEqual(before);
      const [dryT, dryPlain] = dry['tables'] as Array<{ jobs: Record<string, Record<string, unknown>> }>;
      expect(dryT!.jobs['partitions']).toMatchObject({ dryRun: true, partitionsDropped: 23 });
      expect(dryT!.jobs['tags']!['created']).toEqual([{ name: expect.stringMatching(/^\d{4}-\d\d-\d\d$/) as unknown, snapshotId: 1 }]);
      expect(dryPlain!.jobs['partitions']).toBeUndefined();
      const real = await json(['maintain', t, plain, '--json']);
      expect(real).toMatchObject({ tablesFailed: 0, partitionsDropped: 23 });
      const table = await openTable(t, { fileIO: env.wh.io });
      expect(await partitionsRead(table)).toEqual(DAYS.slice(23));
      expect(await partitionsRead(await openTable(plain, { fileIO: env.wh.io }))).toEqual(DAYS);
      expect((await table.listTags()).map((x) => [x.name, x.tag.id])).toEqual([
        [(dryT!.jobs['tags']!['created'] as Array<{ name: string }>)[0]!.name, 1],
      ]);
      // A second run finds nothing to do.
      const again = await json(['maintain', t, '--json']);
      expect(again).toMatchObject({ tablesFailed: 0, partitionsDropped: 0, tagsCreated: 0 });
    }, 240_000);
  });
});
