/**
 * SIGKILL during primary-key compaction: `tidemark compact <table> --full` (the built CLI) runs
 * on copies of a primary-key table with many level-0 runs and is killed after a random delay.
 * After each kill the table reads exactly as before at every snapshot, its snapshots form a
 * contiguous range ending at the old latest or at one whole COMPACT snapshot, and every file a
 * snapshot references exists; a rerun then completes the compaction.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalFileIO } from '@tidemark/storage';
import { DataFileLocator } from '@tidemark/maintenance';
import { liveEntries, openTable, type Table } from '@tidemark/core';
import { commitRecords, createPkTable, rowsAt, type PkRecord } from '../packages/maintenance/test/pk-helpers.js';
import { seededRandom as random } from './support/seeded-random.mjs';
import { repoRoot } from './support/fixtures.js';

const cli = join(repoRoot, 'packages', 'cli', 'bin', 'tidemark.js');
const built = existsSync(join(repoRoot, 'packages', 'cli', 'dist', 'main.js'));
const dirs: string[] = [];

afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

function runCompact(
  location: string,
  killAfterMs?: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, 'compact', location, '--full'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('error', reject);
    // 'close', not 'exit': stderr may still be in the pipe when 'exit' fires.
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      resolve({ code, signal, stderr });
    });
  });
}

async function snapshotRows(table: Table, ids: readonly number[]): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  for (const id of ids) out.set(id, await rowsAt(table, id));
  return out;
}

/** Whole commits only, nothing missing, every snapshot reads as before. */
async function verify(location: string, before: Map<number, string[]>, latestBefore: number, what: string): Promise<number> {
  const io = new LocalFileIO();
  const table = await openTable(location, { fileIO: io });
  const ids = await table.snapshotManager.sortedIds();
  expect(ids, `${what}: contiguous`).toEqual(Array.from({ length: ids.length }, (_, i) => ids[0]! + i));
  const latest = ids[ids.length - 1]!;
  expect([latestBefore, latestBefore + 1], what).toContain(latest);
  const snap = await table.snapshotManager.snapshot(latest);
  if (latest > latestBefore) expect(snap.commitKind, what).toBe('COMPACT');
  const locator = new DataFileLocator(table.paths, table.schema());
  for (const e of (await liveEntries(io, table.paths, snap)).values())
    expect(await io.exists(locator.dataFile(e)), `${what}: ${e.file.fileName}`).toBe(true);
  for (const [id, rows] of before) expect(await rowsAt(table, id), `${what}: snapshot ${id}`).toEqual(rows);
  expect(await rowsAt(table), `${what}: latest`).toEqual(before.get(latestBefore));
  return latest;
}

describe.skipIf(!built)('SIGKILL during primary-key compaction', () => {
  it('leaves whole commits only and an unchanged table; a rerun completes', async () => {
    const table = await createPkTable({ 'target-file-size': '64 kb' });
    dirs.push(table.location.slice(0, table.location.indexOf('/db.db/')));
    const rnd = random(99);
    const seq = new Map<string, bigint>();
    for (let c = 0; c < 16; c++) {
      const batch = new Map<string, PkRecord>();
      for (let i = 0; i < 300; i++) {
        const k = Math.floor(rnd() * 3000);
        const dt = rnd() < 0.5 ? '2024-01-01' : '2024-01-02';
        batch.set(`${dt}|${k}`, { k, dt, kind: c > 0 && rnd() < 0.1 ? 3 : 0, a: BigInt(c * 1000 + i), s: `c${c}-${i}` });
      }
      await commitRecords(table, [...batch.values()], seq);
    }
    const latestBefore = (await table.snapshotManager.latest())!.id;
    const before = await snapshotRows(table, [1, 8, latestBefore]);
    const dir = await mkdtemp(join(tmpdir(), 'tidemark-pk-kill-'));
    dirs.push(dir);
    // One uninterrupted run measures how long the command takes; kills land across that span.
    await cp(table.location, join(dir, 'timing'), { recursive: true });
    const t0 = performance.now();
    expect((await runCompact(join(dir, 'timing'))).code).toBe(0);
    const span = performance.now() - t0;
    const delays = [0.35, 0.6, 0.8, 0.92].map((f) => Math.round(span * f * (0.9 + Math.random() * 0.2)));
    let completedByKill = 0;
    for (const [i, ms] of delays.entries()) {
      const copy = join(dir, `trial-${i}`);
      await cp(table.location, copy, { recursive: true });
      const first = await runCompact(copy, ms);
      expect(first.signal === 'SIGKILL' || first.code === 0, first.stderr).toBe(true);
      const latest = await verify(copy, before, latestBefore, `SIGKILL after ${ms} ms`);
      if (latest > latestBefore) completedByKill++;
      const rerun = await runCompact(copy);
      expect(rerun.code, rerun.stderr).toBe(0);
      expect(await verify(copy, before, latestBefore, `rerun after ${ms} ms`)).toBe(latestBefore + 1);
      const plan = await (await openTable(copy, { fileIO: new LocalFileIO() })).newRead().plan();
      expect(plan.files().every((f) => f.level === 5)).toBe(true);
    }
    console.log(
      `[pk-compact-kill] run ${Math.round(span)} ms; ${delays.length - completedByKill} of ${delays.length} kills (${delays.join(', ')} ms) hit before the COMPACT snapshot`,
    );
    // At least one kill must have hit a compaction in progress for the test to mean anything.
    expect(completedByKill).toBeLessThan(delays.length);
  }, 300_000);
});
