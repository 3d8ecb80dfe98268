/**
 * A process killed with SIGKILL between its commit and the automatic tag that commit crossed into
 * (test/workers/auto-tag-kill-worker.mjs, run from the built dist: `npx turbo run build` first),
 * or right after writing the tag: the next commit, or `tidemark maintain`, creates the missing tag
 * on the snapshot that crossed the boundary, and never a second tag for the same period. On local
 * disk and on the real S3 server.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openTable } from '@tidemark/core';
import { storageBackends } from './support/backends.js';
import { suiteCatalog } from './support/suite-catalog.js';
import { runMain, useCliS3Env } from './support/cli-main.js';
import { runNode } from './support/cli-process.js';
import { s3TestOptions } from './support/s3.js';
import { packagesBuilt } from './support/built.js';

useCliS3Env();

const repo = fileURLToPath(new URL('..', import.meta.url));
const worker = join(repo, 'test', 'workers', 'auto-tag-kill-worker.mjs');
const built = packagesBuilt('automatic tags after SIGKILL', 'core/dist/index.js');

/** Local wall-clock time of a June 2024 day. */
const at = (day: number, hour: number, minute = 0): number => new Date(2024, 5, day, hour, minute).getTime();

describe.each(storageBackends('auto tag kill'))('$name', (backend) => {
  describe.skipIf(!backend.available || !built)('automatic daily tags', () => {
    const env = suiteCatalog(backend);

    /** Tags as `name → snapshot id`, sorted by name. */
    async function tags(location: string): Promise<Array<[string, number]>> {
      const t = await openTable(location, { fileIO: env.wh.io });
      return (await t.listTags()).map(({ name, tag }) => [name, tag.id] as [string, number]).sort(([a], [b]) => (a < b ? -1 : 1));
    }

    /** One commit at `now` by a fresh process-like Table (nothing shared with earlier commits). */
    async function commitAt(location: string, now: number, id: number): Promise<number> {
      const t = await openTable(location, { fileIO: env.wh.io });
      const w = t.newBatchWrite();
      await w.write([{ id }]);
      const r = await t.newCommit({ now: () => now }).commit({ messages: await w.prepareCommit() });
      await w.close();
      if (r.status !== 'committed') throw new Error(r.status);
      return r.snapshotId;
    }

    /** The worker commits at `now` and dies around the tag; returns the snapshot it left. */
    async function killedCommit(location: string, now: number, id: number, kill: 'before-tag' | 'after-tag'): Promise<number> {
      const r = await runNode(
        worker,
        [JSON.stringify({ root: location, rows: [{ id }], now, kill, ...(backend.name === 'S3' ? { s3: s3TestOptions() } : {}) })],
        {
          cwd: repo,
          timeoutMs: 120_000,
        },
      );
      expect(r.timedOut, r.stderr).toBe(false);
      expect(r.code, `the worker was not killed: ${r.stdout}${r.stderr}`).toBeNull();
      return (await (await openTable(location, { fileIO: env.wh.io })).snapshotManager.latest())!.id;
    }

    it('a kill before the tag: the next commit tags the snapshot that crossed midnight; a kill after it: nothing is tagged twice', async () => {
      await env.catalog.createTable('db.events', {
        fields: [{ name: 'id', type: 'INT' }],
        options: { 'tag.automatic-creation': 'process-time', 'tag.creation-period': 'daily' },
      });
      const t = env.catalog.tableLocation('db.events');
      expect(await commitAt(t, at(1, 12), 1)).toBe(1);
      expect(await tags(t)).toEqual([['2024-05-31', 1]]);

      // The first commit of June 2 dies before writing June 1's tag.
      expect(await killedCommit(t, at(2, 0, 30), 2, 'before-tag')).toBe(2);
      expect(await tags(t)).toEqual([['2024-05-31', 1]]);
      // The next commit creates it, on snapshot 2.
      expect(await commitAt(t, at(2, 1), 3)).toBe(3);
      expect(await tags(t)).toEqual([
        ['2024-05-31', 1],
        ['2024-06-01', 2],
      ]);

      // The first commit of June 3 dies right after writing June 2's tag.
      expect(await killedCommit(t, at(3, 0, 30), 4, 'after-tag')).toBe(4);
      const afterKill = [
        ['2024-05-31', 1],
        ['2024-06-01', 2],
        ['2024-06-02', 4],
      ];
      expect(await tags(t)).toEqual(afterKill);
      expect(await commitAt(t, at(3, 1), 5)).toBe(5);
      expect(await tags(t)).toEqual(afterKill);
    }, 300_000);

    it('a kill before the tag: tidemark maintain creates it, once', async () => {
      await env.catalog.createTable('db.hourly', {
        fields: [{ name: 'id', type: 'INT' }],
        options: { 'tag.automatic-creation': 'process-time', 'tag.creation-period': 'hourly', 'tag.creation-delay': '5 min' },
      });
      const t = env.catalog.tableLocation('db.hourly');
      expect(await commitAt(t, at(5, 9, 30), 1)).toBe(1);
      expect(await commitAt(t, at(5, 10, 2), 2)).toBe(2); // within the delay: no tag yet
      expect(await killedCommit(t, at(5, 10, 6), 3, 'before-tag')).toBe(3);
      expect(await tags(t)).toEqual([['2024-06-05 08', 1]]);
      const maintain = async (): Promise<Record<string, unknown>> => {
        const r = await runMain(['maintain', t, '--json'], { now: () => at(5, 10, 30) });
        expect(r.code, r.stderr).toBe(0);
        return JSON.parse(r.stdout) as Record<string, unknown>;
      };
      expect(await maintain()).toMatchObject({ tagsCreated: 1 });
      expect(await tags(t)).toEqual([
        ['2024-06-05 08', 1],
        ['2024-06-05 09', 3],
      ]);
      expect(await maintain()).toMatchObject({ tagsCreated: 0 });
      expect(await tags(t)).toEqual([
        ['2024-06-05 08', 1],
        ['2024-06-05 09', 3],
      ]);
    }, 300_000);
  });
});
