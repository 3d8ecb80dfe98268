/**
 * One-shot `table.append(rows)` on a Table object that is reused (as a Node service holds one):
 * storage requests, sequential round trips and time per call as the table grows, on an append
 * table with fixed buckets and on a primary-key table, next to the long-lived path (one
 * `newCommit()` committer for every append, a writer per append), on local disk and on the S3
 * server when configured. Requests are counted by a FileIO wrapper; a round trip starts whenever a
 * request is issued while none is in flight.
 *
 *   node benchmarks/one-shot-append.bench.mjs [--appends 200] [--s3-appends 100] [--rows 10]
 *
 * Imports the BUILT packages.
 */
import { benchWarehouses, uniqueRoot, withFileIO } from './lib/bench-storage.mjs';
import { closingNotes, fmtInt, fmtNum, markdownTable, resultHeading, resultJson, SHARED_MACHINE_COUNTS } from './lib/report.mjs';
import { countRequests } from './lib/request-counter.mjs';
import { runSettings } from './lib/run-settings.mjs';
import { runStandalone } from './lib/standalone.mjs';
import { mean, percentile } from './lib/stats.mjs';
import { columns, createBenchTable } from './lib/bench-tables.mjs';

export const name = 'one-shot-append';

const TABLES = [
  { table: 'append, 2 fixed buckets', spec: { options: { bucket: '2', 'bucket-key': 'id' } } },
  { table: 'primary key, 2 buckets', spec: { primaryKeys: ['id'], options: { bucket: '2' } } },
];
const APIS = ['table.append (one-shot)', 'newBatchWrite + long-lived newCommit'];
/** Calls per window at the start and at the end of the run. */
const WINDOW = 20;

/** `appends` appends of `rows` rows through one API on a fresh table; per-call figures. */
async function series(root, s3, spec, api, appends, rows) {
  const core = await import('@tidemark/core');
  return withFileIO(root, s3, async (raw) => {
    const { io, take } = countRequests(raw);
    const table = await createBenchTable(core, io, `${root}/wh`, 'db.t', {
      fields: columns('id INT NOT NULL', 'v STRING'),
      ...spec,
    });
    const commit = api === APIS[1] ? table.newCommit() : null;
    take();
    const calls = [];
    for (let i = 0; i < appends; i++) {
      const batch = Array.from({ length: rows }, (_, r) => ({ id: i * rows + r, v: `v${i}-${r}` }));
      const t0 = performance.now();
      let result;
      if (commit === null) result = await table.append(batch);
      else {
        const writer = table.newBatchWrite();
        try {
          await writer.write(batch);
          result = await commit.commit({ messages: await writer.prepareCommit() });
        } finally {
          await writer.close();
        }
      }
      if (result.status !== 'committed') throw new Error(`append ${i + 1}: ${result.status}`);
      calls.push({ ms: performance.now() - t0, snapshots: result.snapshotIds.length, ...take() });
    }
    return calls;
  });
}

/**
 * @param {{ log?: (msg: string) => void, s3?: object, appends?: number, s3Appends?: number, rows?: number }} [options]
 */
export async function run(options = {}) {
  const { log, started, appends, s3Appends, rows } = runSettings(options, { appends: 200, s3Appends: 100, rows: 10 });
  const results = [];
  const problems = [];
  for (const b of benchWarehouses(name, options.s3)) {
    const n = b.s3 ? s3Appends : appends;
    for (const { table, spec } of TABLES) {
      for (const api of APIS) {
        log(`${b.backend} / ${table} / ${api}: ${n} appends of ${rows} rows`);
        let calls;
        try {
          calls = await series(uniqueRoot(b), b.s3, spec, api, n, rows);
        } catch (e) {
          problems.push(`${b.backend} / ${table} / ${api}: ${e?.message ?? e}`);
          continue;
        }
        // The first call is cold (schema, LATEST hint, conditional-write probe on S3): left out.
        const first = calls.slice(1, 1 + WINDOW);
        const last = calls.slice(-WINDOW);
        // Appends that also committed a writer compaction (a second snapshot) are counted apart.
        const plain = calls.slice(1).filter((c) => c.snapshots === 1);
        const r = {
          backend: b.backend,
          table,
          api,
          appends: n,
          rows,
          first: { requests: mean(first.map((c) => c.requests)), roundTrips: mean(first.map((c) => c.roundTrips)) },
          last: { requests: mean(last.map((c) => c.requests)), roundTrips: mean(last.map((c) => c.roundTrips)) },
          plainRoundTripsP50: percentile(
            plain.map((c) => c.roundTrips),
            50,
          ),
          maxRoundTrips: Math.max(...calls.slice(1).map((c) => c.roundTrips)),
          compacting: calls.length - 1 - plain.length,
          ms: {
            p50: percentile(
              calls.slice(1).map((c) => c.ms),
              50,
            ),
            p90: percentile(
              calls.slice(1).map((c) => c.ms),
              90,
            ),
          },
          msLast: percentile(
            last.map((c) => c.ms),
            50,
          ),
        };
        results.push(r);
        log(
          `  requests ${fmtNum(r.first.requests)} -> ${fmtNum(r.last.requests)}, round trips ${fmtNum(r.first.roundTrips)} -> ${fmtNum(r.last.roundTrips)} (p50 ${r.plainRoundTripsP50}), ms p50 ${fmtNum(r.ms.p50)}`,
        );
      }
    }
  }
  const json = resultJson(name, options, started, {
    machine: SHARED_MACHINE_COUNTS,
    appends,
    s3Appends,
    rows,
    window: WINDOW,
    results,
    problems,
  });
  return { name, json, markdown: markdown(json) };
}

function markdown(json) {
  return [
    ...resultHeading('One-shot table.append on a reused Table', json),
    `${json.appends} appends of ${json.rows} rows on local disk, ${json.s3Appends} on S3, each on a fresh table; per call. ` +
      `"First" = calls 2–${json.window + 1} (call 1 is cold), "last" = the last ${json.window}.`,
    '',
    markdownTable(
      [
        'backend',
        'table',
        'API',
        'requests first → last',
        'round trips first → last',
        'round trips p50 (max)',
        'calls with a compaction',
        'ms p50 / p90',
        'ms p50 last',
      ],
      json.results.map((r) => [
        r.backend,
        r.table,
        r.api,
        `${fmtNum(r.first.requests)} → ${fmtNum(r.last.requests)}`,
        `${fmtNum(r.first.roundTrips)} → ${fmtNum(r.last.roundTrips)}`,
        `${fmtInt(r.plainRoundTripsP50)} (${fmtInt(r.maxRoundTrips)})`,
        fmtInt(r.compacting),
        `${fmtNum(r.ms.p50)} / ${fmtNum(r.ms.p90)}`,
        fmtNum(r.msLast),
      ]),
    ),
    '',
    '- A round trip starts whenever a request is issued while none is in flight: requests issued together count once.',
    '- Round trips p50 is over the calls without a writer compaction; a primary-key writer compacts every few appends (a COMPACT snapshot and its reads and writes), which the means include.',
    '- Every ~30th commit merges manifests, and the base check then stats the live files of the touched buckets that no earlier commit of the table had checked: the max column.',
    ...closingNotes(json, '- The machine was shared with other jobs while this ran; treat times as ±30 % (request counts are exact).'),
  ].join('\n');
}

await runStandalone(import.meta.url, run, { '--appends': 'appends', '--s3-appends': 's3Appends', '--rows': 'rows' });
