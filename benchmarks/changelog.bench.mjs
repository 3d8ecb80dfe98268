/**
 * Changelog producer benchmark: the cost of each `changelog-producer` (none, input, lookup,
 * full-compaction) on the same primary-key upsert workload, as a ratio to `none`, on local disk
 * and on the S3 server. (Commit → tailing reader latency is in streaming.bench.mjs.)
 *
 *   node benchmarks/changelog.bench.mjs [--commits 8] [--rows 5000]
 *
 * One long-lived writer (as a streaming job) commits `--commits` batches of `--rows` upserts over
 * a key space of 4 × rows (so later batches update earlier keys, some deletes), with writer
 * compaction on as by default: `lookup` compacts level 0 at every commit and looks old values up,
 * `full-compaction` compacts every bucket fully at every commit (`full-compaction.delta-commits`
 * unset). Reported: write+commit time, bytes of Parquet written (data + changelog, live or not),
 * changelog rows, and the time of streaming the whole change history once.
 * S3 rows need S3_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, S3_BUCKET.
 */
import { benchWarehouses, parquetBytes, withWarehouseIO } from './lib/bench-storage.mjs';
import { closingNotes, describedResultJson, fmtInt, fmtNum, markdownTable, runLine } from './lib/report.mjs';
import { runSettings } from './lib/run-settings.mjs';
import { runStandalone } from './lib/standalone.mjs';
import { createUpsertTable, upsertRows } from './lib/upsert-table.mjs';

export const name = 'changelog';

const PRODUCERS = ['none', 'input', 'lookup', 'full-compaction'];

/**
 * @param {{ log?: (msg: string) => void, s3?: object, commits?: number, rows?: number }} [options]
 */
export async function run(options = {}) {
  const { log, started, commits, rows } = runSettings(options, { commits: 8, rows: 5000 });
  const core = await import('@tidemark/core');
  const results = [];
  const problems = [];
  for (const b of benchWarehouses(name, options.s3)) {
    await withWarehouseIO(b, async (io) => {
      try {
        // Warm-up (Parquet workers, JIT, connections), not measured: the first table would pay for it.
        for (const producer of ['warmup', ...PRODUCERS]) {
          const warmup = producer === 'warmup';
          const tableName = `bench.cl_${producer.replace('-', '_')}`;
          const t = await createUpsertTable(core, io, b.root, tableName, warmup ? 'lookup' : producer);
          log(`${b.backend}: ${commits} commits of ${rows} upserts, changelog-producer = ${producer}`);
          const writer = t.newBatchWrite({ rowKindField: 'op' });
          const commit = t.newCommit();
          const t0 = performance.now();
          for (let i = 0; i < (warmup ? 2 : commits); i++) {
            await writer.write(upsertRows(i, warmup ? 500 : rows, { deletes: true }));
            await commit.commit({ identifier: BigInt(i + 1), messages: await writer.prepareCommit() });
          }
          const writeMs = performance.now() - t0;
          await writer.close();
          if (warmup) continue;
          let changelogRows = 0;
          let streamed = 0;
          const latest = (await t.snapshotManager.latestId()) ?? 0;
          for await (const s of t.snapshotManager.iterateForward()) changelogRows += Number(s.changelogRecordCount ?? 0);
          const t1 = performance.now();
          for await (const c of t.newStreamRead({ from: 'earliest', to: latest, pollIntervalMs: 1 })) streamed += c.batch.numRows;
          const streamMs = performance.now() - t1;
          results.push({
            backend: b.backend,
            producer,
            commits,
            rows,
            snapshots: latest,
            writeMs,
            bytes: await parquetBytes(io, t.location),
            changelogRows,
            streamed,
            streamMs,
          });
        }
      } catch (e) {
        problems.push(`${b.backend}: ${e?.message ?? String(e)}`);
      }
    });
  }
  const json = describedResultJson(
    name,
    'Write+compaction cost of each changelog producer as a ratio to none, on the same upsert workload.',
    options,
    started,
    { results, problems },
  );
  return { name, json, markdown: toMarkdown(json) };
}

function toMarkdown(json) {
  const base = (r) => json.results.find((x) => x.backend === r.backend && x.producer === 'none');
  return [
    '# Changelog producer benchmark',
    '',
    runLine(json.environment, json.totalSeconds),
    '',
    markdownTable(
      [
        'backend',
        'producer',
        'commits × upserts',
        'snapshots',
        'write+compact s (× none)',
        'Parquet MiB (× none)',
        'changelog rows',
        'stream all s',
      ],
      json.results.map((r) => {
        const n = base(r);
        return [
          r.backend,
          r.producer,
          `${r.commits} × ${fmtInt(r.rows)}`,
          fmtInt(r.snapshots),
          `${fmtNum(r.writeMs / 1000, 2)} (×${fmtNum(r.writeMs / n.writeMs, 2)})`,
          `${fmtNum(r.bytes / 1048576, 2)} (×${fmtNum(r.bytes / n.bytes, 2)})`,
          fmtInt(r.changelogRows),
          fmtNum(r.streamMs / 1000, 2),
        ];
      }),
    ),
    '',
    '## What is measured',
    '',
    '- One long-lived writer per table (2 buckets) commits each batch (upserts over a key space of 4 × rows, every 20th row a delete after the first commit), with writer compaction as by default. `none` and `input` compact by universal compaction only; `lookup` compacts all level-0 files at every commit and looks up old values in the levels below the output; `full-compaction` compacts every bucket fully at every commit.',
    '- write+compact = all writes, `prepareCommit` (flush and compaction) and commits. Parquet = every Parquet file under the table at the end (data and changelog; compacted-away files remain until expiration).',
    '- changelog rows = sum of `changelogRecordCount` over the snapshots; stream all = one `newStreamRead` over the whole history (delta files for `none`).',
    ...closingNotes(json),
  ].join('\n');
}

await runStandalone(import.meta.url, run, { '--commits': 'commits', '--rows': 'rows' });
