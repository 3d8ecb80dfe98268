/**
 * Branches through the CLI (`main()` in this process) on local disk and on the real S3 server: a
 * branch made from a tag is written and compacted while main keeps writing and compacting, both
 * are read, both expire their snapshots (main with expire-snapshots after the tag the branch was
 * made from is deleted, the branch with `maintain --branch`, which also expires its tags and
 * cleans orphans), main is fast-forwarded to the branch, and the branch is deleted. Orphan cleanup with
 * `--older-than 0` runs after every step, and every snapshot and tag of every branch must still
 * read afterwards. Also the errors of bad names and unknown branches.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTable, type Table } from '@tidemark/core';
import type { FileIO } from '@tidemark/storage';
import { storageBackends } from './support/backends.js';
import { suiteCatalog } from './support/suite-catalog.js';
import { runMain, useCliS3Env } from './support/cli-main.js';

useCliS3Env();

const jsonl = (rows: readonly object[]): string => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

/** CLI commands the scenario runs; the test's time budget scales with them. */
const SCENARIO_COMMANDS = 40;

async function cli(argv: string[], stdin?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return runMain(argv, stdin !== undefined ? { stdin } : {});
}

async function ok(argv: string[], stdin?: string): Promise<string> {
  const r = await cli(argv, stdin);
  expect(r.code, `${argv.join(' ')}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

async function json(argv: string[]): Promise<Record<string, unknown>> {
  return JSON.parse(await ok([...argv, '--json'])) as Record<string, unknown>;
}

/** Rows of the latest snapshot of `branch`, sorted by id. */
async function rowsOf(io: FileIO, loc: string, branch = 'main'): Promise<unknown[]> {
  const t = await openTable(loc, { fileIO: io, branch });
  return (await t.newRead().toArrowTable())
    .toArray()
    .map((r) => r.toJSON() as { id: number })
    .sort((a, b) => a.id - b.id);
}

/** Reads every snapshot and tag of every branch: throws when a file one of them needs is gone. */
async function everythingReads(io: FileIO, loc: string): Promise<number> {
  const main = await openTable(loc, { fileIO: io });
  let reads = 0;
  for (const branch of ['main', ...(await main.branches().names())]) {
    const t: Table = await openTable(loc, { fileIO: io, branch });
    const read = async (what: string, r: () => Promise<unknown>): Promise<void> => {
      try {
        await r();
      } catch (e) {
        throw new Error(`${what} of branch '${branch}' does not read: ${(e as Error).message}`, { cause: e });
      }
      reads++;
    };
    for (const id of await t.snapshotManager.sortedIds()) await read(`snapshot ${id}`, () => t.newRead({ snapshotId: id }).toArrowTable());
    for (const { name } of await t.listTags()) await read(`tag '${name}'`, () => t.newRead({ tag: name }).toArrowTable());
  }
  return reads;
}

describe.each(storageBackends('branches cli'))('$name', (backend) => {
  describe.skipIf(!backend.available)('branches', () => {
    const env = suiteCatalog(backend);

    async function table(name: string): Promise<string> {
      await env.catalog.createTable(`db.${name}`, {
        fields: [
          { name: 'id', type: 'INT' },
          { name: 'v', type: 'STRING' },
        ],
        primaryKeys: ['id'],
        // Compaction and expiration only when the scenario asks for them.
        options: { bucket: '2', 'write-only': 'true' },
      });
      return env.catalog.tableLocation(`db.${name}`);
    }

    /** Orphan cleanup with no age threshold, then every snapshot and tag of every branch reads. */
    async function cleanAndCheck(t: string): Promise<number> {
      const r = await json(['remove-orphan-files', t, '--older-than', '0']);
      await everythingReads(env.wh.io, t);
      return r['filesDeleted'] as number;
    }

    it(
      'create from a tag, write and compact on both sides, expire both, fast-forward and delete; orphan cleanup keeps what each branch needs',
      async () => {
        const t = await table('events');
        const io = env.wh.io;
        await ok(
          ['write', t],
          jsonl([
            { id: 1, v: 'a' },
            { id: 2, v: 'b' },
          ]),
        );
        await ok(['write', t], jsonl([{ id: 3, v: 'c' }]));
        await ok(['tag', 'create', t, 't1']);

        expect(await json(['branch', 'create', t, 'dev', '--tag', 't1'])).toMatchObject({
          command: 'branch',
          action: 'create',
          name: 'dev',
          fromTag: 't1',
          snapshotId: 2,
          schemaIds: [0],
        });
        const listed = JSON.parse(await ok(['branch', 'list', t, '--json'])) as Record<string, unknown>;
        expect(listed).toMatchObject({
          name: 'dev',
          earliestSnapshotId: 2,
          latestSnapshotId: 2,
          latestSchemaId: 0,
          tags: 1,
          createdFromTag: 't1',
        });
        expect(await ok(['branch', 'list', t])).toMatch(
          /^name +\| snapshots \| schema \| tags \| fromTag \| createTime\n.*\ndev +\| 2\.\.2 +\| +0 \| +1 \| t1 /,
        );
        await cleanAndCheck(t);

        // Both sides write.
        await ok(
          ['write', t, '--branch', 'dev'],
          jsonl([
            { id: 2, v: 'B' },
            { id: 4, v: 'd' },
          ]),
        );
        await cleanAndCheck(t);
        await ok(['write', t], jsonl([{ id: 5, v: 'e' }]));
        await cleanAndCheck(t);
        const devRows = [
          { id: 1, v: 'a' },
          { id: 2, v: 'B' },
          { id: 3, v: 'c' },
          { id: 4, v: 'd' },
        ];
        expect(await rowsOf(io, t, 'dev')).toEqual(devRows);
        expect(JSON.parse((await ok(['read', t, '--branch', 'dev', '--where', 'id = 2'])).trim())).toEqual({ id: 2, v: 'B' });
        expect(await rowsOf(io, t)).toEqual([
          { id: 1, v: 'a' },
          { id: 2, v: 'b' },
          { id: 3, v: 'c' },
          { id: 5, v: 'e' },
        ]);

        // Both sides compact: each replaces the files the tag's snapshot shares.
        expect(await json(['compact', t, '--branch', 'dev', '--full'])).toMatchObject({ dryRun: false });
        expect(await json(['compact', t, '--full'])).toMatchObject({ dryRun: false });
        await cleanAndCheck(t);

        // Main drops the tag the branch was made from and expires everything but its latest
        // snapshot: the branch's first snapshot (the tag's copy) still reads.
        await ok(['tag', 'delete', t, 't1']);
        const mainExpired = await json(['expire-snapshots', t, '--retain-min', '1', '--retain-max', '1', '--older-than', '0']);
        expect(mainExpired['snapshotsExpired']).toBeGreaterThan(0);
        await cleanAndCheck(t);
        expect(await rowsOf(io, t, 'dev')).toEqual(devRows);

        // `maintain --branch dev` two days on: the branch expires past its fork and its tag with a
        // retention goes; main's tag with the same retention and main's snapshots stay, main still reads.
        await ok(['tag', 'delete', t, 't1', '--branch', 'dev']);
        await ok(['tag', 'create', t, 'dev-day', '--branch', 'dev', '--time-retained', '1d']);
        await ok(['tag', 'create', t, 'main-day', '--time-retained', '1d']);
        const mainSnapshots = await (await openTable(t, { fileIO: io })).snapshotManager.sortedIds();
        const dir = await mkdtemp(join(tmpdir(), 'tidemark-branch-maintain-'));
        try {
          const config = join(dir, 'maintain.json');
          await writeFile(
            config,
            JSON.stringify({ expire: { retainMin: 1, retainMax: 1, olderThan: '0s' }, orphans: { olderThan: '0s', grace: '0s' } }),
          );
          const later = Date.now() + 2 * 86_400_000;
          const r = await runMain(['maintain', t, '--branch', 'dev', '--config', config, '--json'], { now: () => later });
          expect(r.code, r.stderr).toBe(0);
          const maintained = JSON.parse(r.stdout) as { tables: Array<{ jobs: Record<string, Record<string, unknown>> }> };
          const jobs = maintained.tables[0]!.jobs;
          expect(jobs['tags']).toMatchObject({ expiredByTime: [{ name: 'dev-day' }] });
          expect(jobs['expire']!['snapshotsExpired']).toBeGreaterThan(0);
          expect(jobs['orphans']).toBeDefined();
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
        expect((await (await openTable(t, { fileIO: io, branch: 'dev' })).listTags()).map((x) => x.name)).toEqual([]);
        expect((await (await openTable(t, { fileIO: io })).listTags()).map((x) => x.name)).toEqual(['main-day']);
        expect(await (await openTable(t, { fileIO: io })).snapshotManager.sortedIds()).toEqual(mainSnapshots);
        expect(await everythingReads(io, t)).toBeGreaterThan(0);
        expect(await rowsOf(io, t, 'dev')).toEqual(devRows);
        expect((await rowsOf(io, t)).map((r) => (r as { id: number }).id)).toEqual([1, 2, 3, 5]);
        await ok(['tag', 'delete', t, 'main-day']);

        // Fast-forward: a dry run changes nothing, then main takes the branch's history.
        const devTable = await openTable(t, { fileIO: io, branch: 'dev' });
        const devEarliest = await devTable.snapshotManager.earliestId();
        const devLatest = await devTable.snapshotManager.latestId();
        const dry = await json(['branch', 'fast-forward', t, 'dev', '--dry-run']);
        expect(dry).toMatchObject({
          dryRun: true,
          branch: 'dev',
          target: 'main',
          fromSnapshotId: devEarliest,
          latestSnapshotId: devLatest,
        });
        expect((await rowsOf(io, t)).map((r) => (r as { id: number }).id)).toEqual([1, 2, 3, 5]);
        expect(await ok(['branch', 'fast-forward', t, 'dev'])).toContain(
          `'main' took the history of branch 'dev' from snapshot ${devEarliest!} on`,
        );
        // Main's replaced snapshots referenced files nobody reads any more.
        expect(await cleanAndCheck(t)).toBeGreaterThan(0);
        expect(await rowsOf(io, t)).toEqual(devRows);

        // Main goes on; deleting the branch leaves main whole.
        await ok(['write', t], jsonl([{ id: 6, v: 'f' }]));
        expect(await json(['branch', 'delete', t, 'dev'])).toMatchObject({ name: 'dev', dryRun: false });
        expect(await ok(['branch', 'list', t])).toBe('the table has no branches besides main\n');
        await cleanAndCheck(t);
        expect(await rowsOf(io, t)).toEqual([...devRows, { id: 6, v: 'f' }]);
        const verify = await cli(['verify', t, '--all']);
        expect(verify.code, verify.stdout + verify.stderr).toBe(0);
      },
      SCENARIO_COMMANDS * 15_000,
    );

    it('ingest, stream consumers, alter and verify work on a branch', async () => {
      const t = await table('ingested');
      await ok(['write', t], jsonl([{ id: 1, v: 'a' }]));
      await ok(['branch', 'create', t, 'dev']);
      const dir = await mkdtemp(join(tmpdir(), 'tidemark-branch-ingest-'));
      try {
        const source = join(dir, 'in.jsonl');
        await writeFile(
          source,
          jsonl([
            { id: 7, v: 'x' },
            { id: 8, v: 'y' },
          ]),
        );
        const summary = JSON.parse(await ok(['ingest', t, '--branch', 'dev', '--source', source, '--commit-user', 'pipe', '--quiet']));
        expect(summary).toMatchObject({ status: 'source-done', records: 2 });
        // Rerun: self-contained mode finds its offset in the branch's snapshots, so nothing is added twice.
        expect(
          JSON.parse(await ok(['ingest', t, '--branch', 'dev', '--source', source, '--commit-user', 'pipe', '--quiet'])),
        ).toMatchObject({
          records: 0,
        });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
      expect(await rowsOf(env.wh.io, t, 'dev')).toEqual([
        { id: 7, v: 'x' },
        { id: 8, v: 'y' },
      ]);
      expect(await rowsOf(env.wh.io, t)).toEqual([{ id: 1, v: 'a' }]);

      await ok(['alter', t, 'add-column', 'w', 'STRING', '--branch', 'dev']);
      expect(JSON.parse(await ok(['schema', t, '--branch', 'dev', '--json'])).fields.map((f: { name: string }) => f.name)).toEqual([
        'id',
        'v',
        'w',
      ]);
      expect(JSON.parse(await ok(['schema', t, '--json'])).fields.map((f: { name: string }) => f.name)).toEqual(['id', 'v']);
      const stream = await ok(['stream', t, '--branch', 'dev', '--from', 'earliest', '--consumer-id', 'c1', '--max-snapshots', '1']);
      expect(
        stream
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { id: number })
          .map((r) => r.id),
      ).toEqual([7, 8]);
      expect(await env.wh.io.exists(`${t}/branch/branch-dev/consumer/consumer-c1`)).toBe(true);
      expect(await env.wh.io.exists(`${t}/consumer/consumer-c1`)).toBe(false);
      expect(JSON.parse(await ok(['verify', t, '--branch', 'dev', '--all', '--json']))).toMatchObject({ ok: true });
    });

    it('bad names and unknown branches are clear errors that change nothing', async () => {
      const t = await table('names');
      await ok(['write', t], jsonl([{ id: 1, v: 'a' }]));
      await ok(['tag', 'create', t, 'v1']);
      const fail = async (argv: string[], message: RegExp): Promise<void> => {
        const r = await cli(argv);
        expect(r.code, r.stdout).toBe(1);
        expect(r.stderr).toMatch(message);
        expect(r.stderr.trim().split('\n')).toHaveLength(1);
      };
      await fail(['branch', 'create', t, 'main'], /branch name 'main' is the default branch and cannot be used/);
      await fail(['branch', 'create', t, '2024'], /branch name cannot be a pure number, but is '2024'/);
      await fail(['branch', 'create', t, 'a/b'], /must not contain '\/'/);
      await fail(['branch', 'create', t, 'dev', '--tag', 'nope'], /tag 'nope' does not exist; available tags: 'v1'/);
      await ok(['branch', 'create', t, 'dev']);
      await fail(['branch', 'create', t, 'dev'], /branch 'dev' already exists/);
      await fail(['read', t, '--branch', 'qa'], /branch 'qa' does not exist in table .*; branches: 'dev'/);
      await fail(['write', t, '--branch', 'qa'], /branch 'qa' does not exist/);
      await fail(['branch', 'fast-forward', t, 'dev'], /branch 'dev' has no snapshot/);
      await fail(['branch', 'fast-forward', t, 'qa'], /branch 'qa' does not exist/);
      await fail(['branch', 'delete', t, 'main'], /the default branch 'main' cannot be deleted/);
      await fail(['branch', 'delete', t, 'qa'], /branch 'qa' does not exist/);
      const usage = await cli(['branch', 'create', t]);
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain("'branch create' needs a branch name");
      expect(await ok(['branch', 'list', t])).toMatch(/\ndev +\| +\| +0 \| +0 \| +\| /);
      expect(await rowsOf(env.wh.io, t)).toEqual([{ id: 1, v: 'a' }]);
    });
  });
});
