/**
 * `tidemark inspect` through `main()` on local tables written by the test: the JSON report, the
 * terminal summary (100 columns, colour only on a terminal) and the HTML page hold what the test
 * wrote; bad command lines and unwritable report files fail with messages naming the option or file.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileSystemCatalog, openTable, type Table } from '@tidemark/core';
import type { TableReport } from '@tidemark/maintenance';
import { main, type MainOptions } from '../src/main.js';
import { MemoryStream } from './helpers.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function run(argv: string[], options: MainOptions & { tty?: boolean } = {}) {
  const stdout = new MemoryStream();
  stdout.isTTY = options.tty ?? false;
  const stderr = new MemoryStream();
  const code = await main(argv, { stdout, stderr, signal: new AbortController().signal, env: {}, ...options });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** A partitioned table with 6 APPEND commits (one file each) into 2 partitions, long partition values. */
async function sixCommits(): Promise<{ dir: string; location: string; table: Table; days: string[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'tidemark-inspect-cli-'));
  dirs.push(dir);
  const catalog = new FileSystemCatalog(dir);
  await catalog.createTable('db.events', {
    fields: [
      { name: 'id', type: 'INT' },
      { name: 'day', type: 'STRING' },
    ],
    partitionKeys: ['day'],
    options: { 'compaction.min.file-num': '3' },
  });
  const location = catalog.tableLocation('db.events');
  await catalog.close();
  const table = await openTable(location);
  // A long value checks that the summary still fits 100 columns.
  const days = ['2024-05-01', `2024-05-02-${'x'.repeat(120)}`];
  for (let i = 0; i < 6; i++) {
    const r = await table.append(Array.from({ length: i + 1 }, (_, k) => ({ id: i * 10 + k, day: days[i % 2]! })));
    expect(r.status).toBe('committed');
  }
  return { dir, location, table, days };
}

const ANSI = /\x1b\[[0-9;]*m/g;

describe('tidemark inspect', () => {
  it('--json prints one report object with what the test wrote', async () => {
    const { location, table } = await sixCommits();
    // An orphan in a bucket directory, older than the threshold given.
    const orphan = join(location, 'day=2024-05-01', 'bucket-0', 'data-orphan.parquet');
    await writeFile(orphan, Buffer.alloc(321));
    const r = await run(['inspect', location, '--json', '--older-than', '0s']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    const report = JSON.parse(r.stdout) as TableReport;
    expect(report.table).toBe(location);
    expect(report.timeline.snapshots.map((s) => [s.id, s.kind, s.rowsAdded, s.rowsRemoved])).toEqual(
      [1, 2, 3, 4, 5, 6].map((id) => [id, 'APPEND', id, 0]),
    );
    expect(report.liveFiles).toMatchObject({ files: 6, rows: 21, partitions: 2, buckets: 2 });
    expect(report.largestPartitions.map((p) => p.files)).toEqual([3, 3]);
    const m = report.maintenance!;
    expect(m.orphans).toMatchObject({ status: 'planned', files: 1, bytes: 321 });
    expect(m.compaction).toMatchObject({ status: 'planned', mode: 'append', files: 6, windows: 2, partitions: 2 });
    expect(m.expire).toMatchObject({ status: 'planned', snapshots: 0 });
    // Nothing was changed: the orphan and every snapshot are still there.
    expect((await readFile(orphan)).length).toBe(321);
    expect(await table.snapshotManager.sortedIds()).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('prints a summary that fits 100 columns, with colour only on a terminal', async () => {
    const { location } = await sixCommits();
    const piped = await run(['inspect', location, '--skip-maintenance']);
    expect(piped.code).toBe(0);
    expect(piped.stdout).not.toMatch(ANSI);
    const lines = piped.stdout.trimEnd().split('\n');
    for (const l of lines) expect([...l].length).toBeLessThanOrEqual(100);
    expect(piped.stdout).toMatch(/^snapshots +6 retained \(#1 … #6\)/m);
    // One sparkline column per snapshot: rows added 1…6 rise a block each (zero alone is the lowest).
    expect(piped.stdout).toMatch(/^ {2}rows added +▃▄▅▆▇█ max 6$/m);
    expect(piped.stdout).toMatch(/^ {2}rows removed +▁▁▁▁▁▁ max 0$/m);
    expect(piped.stdout).toMatch(/^ {2}commits +AAAAAA$/m);
    // An append table with bucket -1 has no buckets to count (every file sits in bucket-0).
    expect(piped.stdout).toMatch(/^live data +6 files · .* · 21 rows · 2 partitions · unbucketed$/m);
    // Nine size bins, each with its count; every file here is tiny, so all sit in the first bin.
    const bins = lines.filter((l) => /^ {2}[<≥] /.test(l));
    expect(bins).toHaveLength(9);
    expect(bins.map((l) => Number(/ (\d+)( ← target-file-size)?$/.exec(l)![1]))).toEqual([6, 0, 0, 0, 0, 0, 0, 0, 0]);
    // The default target is 256 MiB: the seventh bin ends there.
    expect(bins[6]).toMatch(/^ {2}< 256\.0 MiB +0 ← target-file-size$/);
    expect(piped.stdout).toMatch(/^ {2}day=2024-05-02-x+… .* 3 files \(3 small\)$/m);
    expect(piped.stdout).toMatch(/^maintenance +not planned \(--skip-maintenance\)$/m);

    const tty = await run(['inspect', location, '--skip-maintenance'], { tty: true });
    expect(tty.stdout).toMatch(ANSI);
    expect(tty.stdout.replace(ANSI, '')).toBe(piped.stdout);
    const noColor = await run(['inspect', location, '--skip-maintenance'], { tty: true, env: { NO_COLOR: '1' } });
    expect(noColor.stdout).not.toMatch(ANSI);
  });

  it('--html writes one self-contained page with a mark per snapshot and per size bin', async () => {
    const { dir, location } = await sixCommits();
    const file = join(dir, 'report.html');
    const r = await run(['inspect', location, '--html', file, '--json']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const html = await readFile(file, 'utf8');
    const report = JSON.parse(r.stdout) as TableReport;
    expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(html.match(/<g class="snapshot"/g)).toHaveLength(6);
    expect(html.match(/<rect class="bin"/g)).toHaveLength(9 * (1 + report.largestPartitions.length));
    expect(html.match(/<rect class="partition"/g)).toHaveLength(2);
    // Self-contained: no external resources and no executable script.
    expect(html).not.toMatch(/\s(src|href)=/);
    expect(html).not.toMatch(/<link|@import|url\(/);
    expect(html.match(/<script[^>]*>/g)).toEqual(['<script type="application/json" id="tidemark-report">']);
    // The embedded data is the report itself.
    const embedded = /<script type="application\/json" id="tidemark-report">(.*)<\/script>/.exec(html)![1]!;
    expect(JSON.parse(embedded)).toEqual(report);
  });

  it('refuses bad command lines and an unwritable report file, naming the option or file', async () => {
    const { dir, location } = await sixCommits();
    const future = await run(['inspect', location, '--older-than', '2999-01-01T00:00:00Z']);
    expect(future.code).toBe(2);
    expect(future.stderr).toMatch(/--older-than' is in the future/);
    const both = await run(['inspect', location, '--skip-maintenance', '--older-than', '1d']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/'--skip-maintenance' and '--older-than' cannot be used together/);
    const missing = join(dir, 'no-such-dir', 'r.html');
    const unwritable = await run(['inspect', location, '--html', missing, '--skip-maintenance']);
    expect(unwritable.code).toBe(1);
    expect(unwritable.stderr).toContain(`cannot write the HTML report to ${missing}`);
    expect(unwritable.stderr).not.toMatch(/unexpected/);
    const remote = await run(['inspect', location, '--html', 's3://bucket/r.html']);
    expect(remote.code).toBe(2);
    expect(remote.stderr).toMatch(/'--html' takes a local file path, got 's3:\/\/bucket\/r.html'/);
    const viaUrl = await run(['inspect', location, '--html', `file://${join(dir, 'url.html')}`, '--skip-maintenance']);
    expect(viaUrl.code).toBe(0);
    expect(await readFile(join(dir, 'url.html'), 'utf8')).toMatch(/^<!DOCTYPE html>/);
    const nowhere = await run(['inspect', join(dir, 'db.db', 'nope')]);
    expect(nowhere.code).toBe(1);
  });
});
