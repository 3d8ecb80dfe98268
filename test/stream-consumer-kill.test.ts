/**
 * SIGKILL of a `tidemark stream --consumer-id` process (the built CLI: run `npx turbo run build`
 * first), on local disk and on the S3 server. The table has a changelog producer and two buckets,
 * so each snapshot's changes come as two batches; snapshots are committed before and between the
 * runs. After every kill a new process with the same consumer id resumes. Checked:
 * - nothing is lost: every snapshot's rows are printed completely by some run, in snapshot order;
 * - the consumer file names where the next run starts, and that is the last snapshot the killed
 *   run finished printing or the one after (the snapshot in flight at the kill, and only it, is
 *   printed again, in full: the progress point is the request for the batch after its last);
 * - a snapshot a run had started printing past its recorded progress is never skipped.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileSystemCatalog, openTable, type Table } from '@tidemark/core';
import { storageBackends } from './support/backends.js';
import { cliS3Variables, s3TestEnv } from './support/s3.js';

const repo = fileURLToPath(new URL('..', import.meta.url));
const cli = join(repo, 'packages', 'cli', 'bin', 'tidemark.js');
const built = existsSync(join(repo, 'packages', 'cli', 'dist', 'main.js'));
if (!built) console.warn('[tidemark] SKIPPED stream consumer kill test: packages are not built (run `npx turbo run build`)');

interface Line {
  readonly k: number;
  readonly v: string;
  readonly kind: string;
}

/** Starts `tidemark stream`; kills it with SIGKILL once `killWhen` holds for the lines read so far. */
function runStream(
  args: string[],
  env: Record<string, string>,
  killWhen: (lines: Line[]) => boolean,
  beforeKill: () => Promise<void> = async () => undefined,
): Promise<Line[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, 'stream', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, TIDEMARK_NO_PROGRESS: '1', ...env },
    });
    const lines: Line[] = [];
    let partial = '';
    let stderr = '';
    let killed = false;
    const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stdout.on('data', (d: Buffer) => {
      partial += d.toString();
      const parts = partial.split('\n');
      partial = parts.pop()!;
      for (const p of parts) {
        const o = JSON.parse(p) as { k: number; v: string; _row_kind: string };
        lines.push({ k: o.k, v: o.v, kind: o._row_kind });
      }
      if (!killed && killWhen(lines)) {
        killed = true;
        void beforeKill().finally(() => child.kill('SIGKILL'));
      }
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (_code, signal) => {
      clearTimeout(guard);
      if (signal !== 'SIGKILL') reject(new Error(`stream exited without being killed: ${stderr}`));
      else resolve(lines);
    });
  });
}

/** Snapshot s writes keys s*10+0..3 (+I) and updates key (s-1)*10 (-U/+U) from s = 2 on. */
async function commitSnapshot(t: Table, s: number): Promise<void> {
  const rows: Array<Record<string, unknown>> = [0, 1, 2, 3].map((j) => ({ k: s * 10 + j, v: `s${s}`, op: '+I' }));
  if (s > 1) rows.push({ k: (s - 1) * 10, v: `s${s - 1}`, op: '-U' }, { k: (s - 1) * 10, v: `s${s}`, op: '+U' });
  await t.append(rows, { rowKindField: 'op' });
}

const signature = (l: Line): string => `${l.kind} ${l.k} ${l.v}`;

let cliEnv: Record<string, string> = {};
beforeAll(() => {
  const env = s3TestEnv();
  if (env) cliEnv = cliS3Variables(env);
});
afterAll(() => undefined);

describe.each(storageBackends('stream consumer kill'))('$name', (backend) => {
  it.skipIf(!built || !backend.available)(
    'a SIGKILLed stream resumes from its consumer: no snapshot lost, only the one in flight repeated',
    async () => {
      const wh = await backend.open();
      try {
        const catalog = new FileSystemCatalog(wh.root, { fileIO: wh.io });
        await catalog.createTable('db.t', {
          fields: [
            { name: 'k', type: 'INT NOT NULL' },
            { name: 'v', type: 'STRING' },
          ],
          primaryKeys: ['k'],
          options: { bucket: '2', 'changelog-producer': 'input' },
        });
        const location = catalog.tableLocation('db.t');
        const t = await openTable(location, { fileIO: wh.io });
        const TOTAL = 12;
        for (let s = 1; s <= 6; s++) await commitSnapshot(t, s);
        const args = [location, '--from', 'earliest', '--consumer-id', 'kill-test', '--poll-interval', '50ms'];

        // What each snapshot's changes are, by snapshot (computed once all are committed).
        const expected = new Map<number, string[]>();
        const runs: Line[][] = [];
        const starts: number[] = [];
        const killPoints = [5, 9];
        for (let r = 0; r < 3; r++) {
          starts.push((await t.consumers().nextSnapshot('kill-test')) ?? 1);
          const lastRun = r === 2;
          const lastAppend = (await t.snapshotManager.latestId())!;
          // The last run is killed once it printed everything and recorded progress past it.
          const lines = await runStream(
            args,
            cliEnv,
            (ls) => (lastRun ? ls.some((l) => l.k === TOTAL * 10 + 3) : ls.length >= killPoints[r]!),
            async () => {
              for (let i = 0; lastRun && i < 200 && ((await t.consumers().nextSnapshot('kill-test')) ?? 0) <= lastAppend; i++) {
                await new Promise((res) => setTimeout(res, 25));
              }
            },
          );
          runs.push(lines);
          if (!lastRun) for (let s = 7 + 3 * r; s < 10 + 3 * r; s++) await commitSnapshot(t, s);
        }
        const latest = (await t.snapshotManager.latestId())!;
        const snapshotOf = new Map<string, number>();
        for await (const b of t.newStreamRead({ from: 'earliest', to: latest })) {
          const list = expected.get(b.snapshotId) ?? [];
          for (const r of b.batch.toArray()) {
            const o = r.toJSON() as { k: number; v: string; _row_kind: string };
            const sig = signature({ k: o.k, v: o.v, kind: o._row_kind });
            list.push(sig);
            snapshotOf.set(sig, b.snapshotId);
          }
          expected.set(b.snapshotId, list);
        }
        // Each commit is one APPEND snapshot with changes (compactions add COMPACT ones without).
        expect(expected.size).toBe(TOTAL);
        const withChanges = [...expected.keys()];
        const nextWithChanges = (after: number): number => withChanges.find((id) => id > after) ?? latest + 1;

        const complete = new Set<number>();
        for (let r = 0; r < runs.length; r++) {
          const lines = runs[r]!;
          const order = lines.map((l) => snapshotOf.get(signature(l))!);
          expect(order.every((id) => id !== undefined)).toBe(true);
          // Rows come in snapshot order, each snapshot's rows together.
          for (let i = 1; i < order.length; i++) expect(order[i]!).toBeGreaterThanOrEqual(order[i - 1]!);
          expect(order[0], `run ${r} starts at its consumer's snapshot`).toBe(nextWithChanges(starts[r]! - 1));
          const done: number[] = [];
          for (const id of new Set(order)) {
            const got = lines
              .filter((_, i) => order[i] === id)
              .map(signature)
              .sort();
            const want = [...expected.get(id)!].sort();
            if (got.length === want.length) {
              expect(got).toEqual(want);
              done.push(id);
              complete.add(id);
            } else {
              // Only the snapshot in flight at the kill can be partial, and it is the last one.
              expect(id).toBe(Math.max(...order));
              expect(want).toEqual(expect.arrayContaining(got));
            }
          }
          if (r + 1 < runs.length) {
            const lastDone = Math.max(starts[r]! - 1, ...done);
            // The next run starts at the last finished snapshot (killed before its progress was
            // recorded) or after it, but never past the next snapshot with changes.
            expect(starts[r + 1]!).toBeGreaterThanOrEqual(lastDone);
            expect(starts[r + 1]!).toBeLessThanOrEqual(nextWithChanges(lastDone));
          }
        }
        for (const id of withChanges) expect(complete.has(id), `snapshot ${id} printed completely`).toBe(true);
        // The last run printed every row and asked for more: its progress passed the last snapshot with changes.
        expect((await t.consumers().nextSnapshot('kill-test'))!).toBeGreaterThan(withChanges[withChanges.length - 1]!);
      } finally {
        await wh.cleanup();
      }
    },
    180_000,
  );
});
