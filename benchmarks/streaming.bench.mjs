/**
 * Streaming benchmark: latency from a commit to a tailing reader (`table.newStreamRead`, p50/p99)
 * and the write overhead of `changelog-producer` = `input`, on local disk and on the S3 server.
 *
 *   node benchmarks/streaming.bench.mjs [--commits 40] [--rows 2000] [--poll 100]
 *
 * Latency: one process commits small upserts every 150 ms to a primary-key table with an input
 * changelog while a streaming read in the same process polls every `--poll` ms; the figure is the
 * time from the snapshot's commit time (`timeMillis`) to the stream handing out its last batch (so
 * it includes up to one poll interval of waiting). Overhead: the same upserts (`--rows` per commit)
 * written with and without the producer: write+commit time and bytes of Parquet files.
 * S3 rows need S3_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, S3_BUCKET.
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { benchWarehouses, parquetBytes, withWarehouseIO } from './lib/bench-storage.mjs';
import { closingNotes, describedResultJson, fmtInt, fmtNum, markdownTable, runLine } from './lib/report.mjs';
import { runSettings } from './lib/run-settings.mjs';
import { runStandalone } from './lib/standalone.mjs';
import { percentile } from './lib/stats.mjs';
import { createUpsertTable, upsertRows } from './lib/upsert-table.mjs';

export const name = 'streaming';

/**
 * @param {{ log?: (msg: string) => void, s3?: object, commits?: number, rows?: number, poll?: number }} [options]
 */
export async function run(options = {}) {
  const { log, started, commits, rows, poll } = runSettings(options, { commits: 40, rows: 2000, poll: 100 });
  const core = await import('@tidemark/core');
  const latency = [];
  const overhead = [];
  const problems = [];

  for (const b of benchWarehouses(name, options.s3)) {
    await withWarehouseIO(b, async (io) => {
      // --- commit → tailing reader latency ----------------------------------------------------
      log(`${b.backend}: ${commits} commits with a tailing reader (poll ${poll} ms)`);
      const t = await createUpsertTable(core, io, b.root, 'bench.tail', 'input');
      const committedAt = new Map();
      const receivedAt = new Map();
      const ac = new AbortController();
      const reader = (async () => {
        for await (const c of t.newStreamRead({ from: 'earliest', pollIntervalMs: poll, signal: ac.signal })) {
          if (c.lastOfSnapshot) receivedAt.set(c.snapshotId, Date.now());
        }
      })();
      for (let i = 0; i < commits; i++) {
        const r = await t.append(upsertRows(i, 10));
        // The APPEND snapshot (a writer compaction may add a COMPACT one, which has no changes).
        committedAt.set((r.snapshotIds ?? [r.snapshotId])[0], true);
        await sleep(150);
      }
      const deadline = Date.now() + 30_000;
      while ([...committedAt.keys()].some((id) => !receivedAt.has(id)) && Date.now() < deadline) await sleep(20);
      ac.abort();
      await reader;
      const lags = [];
      for (const id of committedAt.keys()) {
        // From the snapshot's commit time (its timeMillis, taken just before snapshot-N is created).
        if (receivedAt.has(id)) lags.push(receivedAt.get(id) - (await t.snapshotManager.snapshot(id)).timeMillis);
      }
      if (lags.length < commits) problems.push(`${b.backend}: the reader saw ${lags.length} of ${commits} snapshots`);
      latency.push({
        backend: b.backend,
        commits,
        pollMs: poll,
        p50: percentile(lags, 50),
        p99: percentile(lags, 99),
        max: Math.max(...lags),
        lags,
      });

      // --- changelog overhead -----------------------------------------------------------------
      const row = { backend: b.backend, commits: 10, rowsPerCommit: rows };
      for (const producer of ['none', 'input']) {
        log(`${b.backend}: 10 commits of ${rows} upserts, changelog-producer = ${producer}`);
        const tt = await createUpsertTable(core, io, b.root, `bench.ov_${producer}`, producer);
        const t0 = performance.now();
        for (let i = 0; i < 10; i++) await tt.append(upsertRows(i, rows));
        row[producer] = { ms: performance.now() - t0, bytes: await parquetBytes(io, tt.location) };
      }
      overhead.push(row);
    });
  }

  const json = describedResultJson(
    name,
    'Commit-to-reader latency of a streaming read (p50/p99) and the write overhead of changelog-producer = input.',
    options,
    started,
    { latency, overhead, problems },
  );
  return { name, json, markdown: toMarkdown(json) };
}

function toMarkdown(json) {
  const ms = (v) => fmtNum(v, v >= 100 ? 0 : 1);
  return [
    '# Streaming benchmark',
    '',
    runLine(json.environment, json.totalSeconds),
    '',
    '## Commit → tailing reader latency',
    '',
    markdownTable(
      ['backend', 'commits', 'poll ms', 'latency ms p50 / p99', 'max ms'],
      json.latency.map((l) => [l.backend, fmtInt(l.commits), fmtInt(l.pollMs), `${ms(l.p50)} / ${ms(l.p99)}`, ms(l.max)]),
    ),
    '',
    '## Changelog overhead (changelog-producer = input vs none)',
    '',
    markdownTable(
      ['backend', 'commits × upserts', 'write+commit s none → input', 'Parquet MiB none → input'],
      json.overhead.map((o) => [
        o.backend,
        `${o.commits} × ${fmtInt(o.rowsPerCommit)}`,
        `${fmtNum(o.none.ms / 1000, 2)} → ${fmtNum(o.input.ms / 1000, 2)} (×${fmtNum(o.input.ms / o.none.ms, 2)})`,
        `${fmtNum(o.none.bytes / 1048576, 2)} → ${fmtNum(o.input.bytes / 1048576, 2)} (×${fmtNum(o.input.bytes / o.none.bytes, 2)})`,
      ]),
    ),
    '',
    '## What is measured',
    '',
    '- Latency: a primary-key table (2 buckets, changelog-producer = input) gets small upserts (10 rows) every 150 ms; a `newStreamRead` in the same process polls the snapshot directory every "poll ms". The figure runs from the snapshot `timeMillis` (taken just before `snapshot-N` is created) to the stream handing out the last batch of that snapshot (wall clock, same machine): it includes creating the snapshot file, up to one poll interval, reading the snapshot, its changelog manifest list and manifests, and the changelog Parquet files. Writer and reader share one event loop.',
    '- Overhead: the same upsert commits written to a table without and with the input changelog (writer compaction on, as by default). Bytes = all Parquet files under the table (data + changelog) after the 10 commits.',
    ...closingNotes(json),
  ].join('\n');
}

await runStandalone(import.meta.url, run, { '--commits': 'commits', '--rows': 'rows', '--poll': 'poll' });
