/**
 * `partition.expiration-check-interval` and `tidemark maintain` run from cron: every `maintain`
 * (and `expire-partitions`) run is a partition-expiration check, whatever the interval, as Java's
 * expire_partitions procedure (interval 0); the interval paces the committers only (Java's
 * in-memory last check of a writer), so a `write` right after a partition expired leaves it and
 * the next scheduled `maintain` drops it. A cron-run operator schedules the checks; a run never
 * skips its check because an earlier one happened less than an interval ago (nothing on storage
 * says when that was).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTable } from '@tidemark/core';
import { runMain } from './support/cli-main.js';

/** Noon of 2024-06-30, local wall clock: the CLI's "now" of the first run. */
const NOW = new Date(2024, 5, 30, 12).getTime();
const HOUR = 3_600_000;
const day = (d: number): string => `2024-06-${String(d).padStart(2, '0')}`;
const jsonl = (rows: readonly object[]): string => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tidemark-check-interval-'));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function cli(argv: string[], now: number, stdin?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return runMain(argv, { now: () => now, cwd: dir, ...(stdin !== undefined ? { stdin } : {}) });
}

async function partitions(table: string): Promise<string[]> {
  const t = await openTable(table);
  const rows = (await t.newRead().toArrowTable()).toArray();
  return [...new Set(rows.map((r) => (r.toJSON() as { dt: string }).dt))].sort();
}

describe('maintain and partition.expiration-check-interval', () => {
  it('every maintain run checks, though the last check was less than the interval ago; a committer waits for the interval', async () => {
    const table = join(dir, 'db.db', 'events');
    const schema = JSON.stringify([
      { name: 'dt', type: 'STRING NOT NULL' },
      { name: 'id', type: 'INT' },
    ]);
    const options = ['--option', 'partition.expiration-time=7 d', '--option', 'partition.expiration-check-interval=1 d'];
    expect((await cli(['create', table, '--schema', schema, '--partition', 'dt', ...options], NOW)).code).toBe(0);
    const days = Array.from({ length: 30 }, (_, i) => day(i + 1));
    const w = await cli(['write', table], NOW, jsonl(days.map((dt, id) => ({ dt, id }))));
    expect(w.code, w.stderr).toBe(0);
    // The write's committer started a moment ago: its first check is one interval away.
    expect(await partitions(table)).toEqual(days);

    const first = await cli(['maintain', table, '--json'], NOW);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ partitionsDropped: 23 });
    expect(await partitions(table)).toEqual(days.slice(23));

    // 13 hours later (less than the 1-day interval): 2024-06-24 is now older than 7 days. A write
    // of an old day by a fresh committer does not check yet ...
    const later = NOW + 13 * HOUR;
    const late = await cli(['write', table], later, jsonl([{ dt: day(2), id: 100 }]));
    expect(late.code, late.stderr).toBe(0);
    expect(await partitions(table)).toEqual([day(2), ...days.slice(23)]);
    // ... and the scheduled maintain run checks at once.
    const second = await cli(['maintain', table, '--json'], later);
    expect(second.code, second.stderr).toBe(0);
    const summary = JSON.parse(second.stdout) as {
      partitionsDropped: number;
      tables: Array<{ jobs: { partitions: { partitions: unknown[] } } }>;
    };
    expect(summary.partitionsDropped).toBe(2);
    expect(await partitions(table)).toEqual(days.slice(24));

    // expire-partitions is a check too.
    const third = await cli(['expire-partitions', table, '--json'], later + 24 * HOUR);
    expect(third.code, third.stderr).toBe(0);
    expect(await partitions(table)).toEqual(days.slice(25));
  }, 120_000);
});
