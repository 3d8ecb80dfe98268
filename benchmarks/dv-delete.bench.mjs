/**
 * Deletes and updates on an append table with deletion vectors (2 fixed buckets, 2 partitions):
 * the storage requests, sequential round trips and time of each kind of step of a seeded workload
 * (appends of 5-35 rows, `delete({ where })`, `update({ where, set })`, as the model-checked test
 * `test/deletion-vectors-append.test.ts` runs it), then of reading every snapshot back by time
 * travel, on local disk and on the S3 server when configured. Requests are counted by a FileIO
 * wrapper; a round trip starts whenever a request is issued while none is in flight.
 *
 *   node benchmarks/dv-delete.bench.mjs [--steps 20] [--s3-steps 10] [--seed 3]
 *
 * Imports the BUILT packages.
 */
import { benchWarehouses, uniqueRoot, withFileIO } from './lib/bench-storage.mjs';
import { closingNotes, fmtInt, fmtNum, markdownTable, resultHeading, resultJson, SHARED_MACHINE_COUNTS } from './lib/report.mjs';
import { countRequests } from './lib/request-counter.mjs';
import { runSettings } from './lib/run-settings.mjs';
import { runStandalone } from './lib/standalone.mjs';
import { seededRandom } from '../test/support/seeded-random.mjs';
import { columns, createBenchTable } from './lib/bench-tables.mjs';

export const name = 'dv-delete';

/** Runs the workload on one backend; returns per-kind sums and the read-back figures. */
async function workload(root, s3, steps, seed) {
  const core = await import('@tidemark/core');
  return withFileIO(root, s3, async (raw) => {
    const { io, take } = countRequests(raw, { classify: requestClass, classes: ['index', 'manifest', 'data'] });
    const table = await createBenchTable(core, io, `${root}/wh`, 'db.t', {
      fields: columns('id INT NOT NULL', 'g STRING', 'v INT'),
      partitionKeys: ['g'],
      options: { bucket: '2', 'bucket-key': 'id', 'deletion-vectors.enabled': 'true' },
    });
    take();
    const random = seededRandom(seed);
    const kinds = {};
    const add = (kind, ms, s) => {
      const k = (kinds[kind] ??= { kind, steps: 0, ms: 0, requests: 0, roundTrips: 0, index: 0, manifest: 0, data: 0, maxRoundTrips: 0 });
      k.steps++;
      k.ms += ms;
      for (const f of ['requests', 'roundTrips', 'index', 'manifest', 'data']) k[f] += s[f];
      k.maxRoundTrips = Math.max(k.maxRoundTrips, s.roundTrips);
    };
    const ids = [];
    let next = 0;
    for (let s = 0; s < steps; s++) {
      const t0 = performance.now();
      if (s > 0 && random() < 0.45) {
        const lo = Math.floor(random() * 100);
        const hi = lo + Math.floor(random() * 30);
        const where = random() < 0.5 ? `v >= ${lo} AND v < ${hi}` : `g = 'a' AND v < ${hi}`;
        if (random() < 0.4) {
          const nv = Math.floor(random() * 120);
          const set = random() < 0.5 ? { v: nv } : { g: random() < 0.5 ? 'a' : 'b', v: nv };
          const { result } = await table.update({ where, set });
          if (result.status === 'committed') ids.push(result.snapshotId);
          add(result.status === 'committed' ? 'update' : 'update (no match)', performance.now() - t0, take());
        } else {
          const { result } = await table.delete({ where });
          if (result.status === 'committed') ids.push(result.snapshotId);
          add(result.status === 'committed' ? 'delete' : 'delete (no match)', performance.now() - t0, take());
        }
      } else {
        const rows = Array.from({ length: 5 + Math.floor(random() * 30) }, () => ({
          id: next++,
          g: random() < 0.5 ? 'a' : 'b',
          v: Math.floor(random() * 120),
        }));
        const result = await table.append(rows);
        if (result.status === 'committed') ids.push(result.snapshotId);
        add('append', performance.now() - t0, take());
      }
    }
    const t0 = performance.now();
    let rows = 0;
    for (const id of ids) rows += (await table.newRead({ snapshotId: id }).toArrowTable()).numRows;
    add(`read ${ids.length} snapshots`, performance.now() - t0, take());
    return { kinds: Object.values(kinds), rowsRead: rows };
  });
}

/** What a request touches, by its path: deletion-vector index files, manifests or data files. */
function requestClass(path) {
  if (path.includes('/index/')) return 'index';
  if (path.includes('/manifest/')) return 'manifest';
  if (path.includes('/bucket-')) return 'data';
  return undefined;
}

/**
 * @param {{ log?: (msg: string) => void, s3?: object, steps?: number, s3Steps?: number, seed?: number }} [options]
 */
export async function run(options = {}) {
  const { log, started, steps, s3Steps, seed } = runSettings(options, { steps: 20, s3Steps: 10, seed: 3 });
  const results = [];
  const problems = [];
  for (const b of benchWarehouses(name, options.s3)) {
    const n = b.s3 ? s3Steps : steps;
    log(`${b.backend}: ${n} workload steps (seed ${seed}), then every snapshot read back`);
    const r = await workload(uniqueRoot(b), b.s3, n, seed);
    for (const k of r.kinds) {
      results.push({ backend: b.backend, ...k });
      log(
        `${b.backend} ${k.kind}: ${k.steps} x, ${fmtNum(k.requests / k.steps)} requests, ${fmtNum(k.roundTrips / k.steps)} round trips, ${fmtNum(k.ms / k.steps)} ms each`,
      );
    }
  }
  const json = resultJson(name, options, started, {
    machine: SHARED_MACHINE_COUNTS,
    steps,
    s3Steps,
    seed,
    results,
    problems,
  });
  return { name, json, markdown: markdown(json) };
}

function markdown(json) {
  return [
    ...resultHeading('Deletes and updates on an append table with deletion vectors', json),
    `Seeded workload (seed ${json.seed}): ${json.steps} steps on local disk, ${json.s3Steps} on S3; per step of each kind, averages.`,
    '',
    markdownTable(
      ['backend', 'step', 'count', 'requests', 'round trips (max)', 'DV index requests', 'manifest requests', 'data requests', 'ms'],
      json.results.map((r) => [
        r.backend,
        r.kind,
        fmtInt(r.steps),
        fmtNum(r.requests / r.steps),
        `${fmtNum(r.roundTrips / r.steps)} (${fmtInt(r.maxRoundTrips)})`,
        fmtNum(r.index / r.steps),
        fmtNum(r.manifest / r.steps),
        fmtNum(r.data / r.steps),
        fmtNum(r.ms / r.steps),
      ]),
    ),
    '',
    '- A round trip starts whenever a request is issued while none is in flight: requests issued together count once.',
    ...closingNotes(json, '- The machine was shared with other jobs while this ran; treat times as ±30 % (request counts are exact).'),
  ].join('\n');
}

await runStandalone(import.meta.url, run, { '--steps': 'steps', '--s3-steps': 's3Steps', '--seed': 'seed' });
