// Storage latencies through the public FileIO API of the built @tidemark/storage (dist), on local
// disk and on the S3 server (Ceph RGW on memstore, same machine): createIfAbsent, small PUT and
// GET (1 KiB) one at a time, and listing 10,000 keys. Each latency row is N serial operations
// after a warm-up; list rows are repeated full recursive listings of the same 10,000 keys.
// Run with `npm run bench -- storage` (starts the S3 server if needed) or alone with
// `node benchmarks/storage.bench.mjs` (S3 rows only when S3_ENDPOINT etc. are set).
import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { LocalFileIO, S3FileIO, joinPath } from '@tidemark/storage';
import { WORK_DIR, environment, fmtInt, fmtNum, markdownTable } from './lib/report.mjs';
import { runIfMain, s3FromEnv } from './lib/standalone.mjs';
import { percentile } from './lib/stats.mjs';

export const name = 'storage';

const N_LATENCY = 300;
const WARMUP = 20;
const LIST_KEYS = 10_000;
const LIST_REPEATS = 5;
const WRITE_CONCURRENCY = 32;

function latencyRow(backend, operation, samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
  return {
    backend,
    operation,
    n: samples.length,
    'p50 ms': percentile(sorted, 50),
    'p99 ms': percentile(sorted, 99),
    'mean ms': mean,
    'ops/s': 1000 / mean,
  };
}

async function timeEach(items, fn) {
  const samples = [];
  for (const item of items) {
    const t = performance.now();
    await fn(item);
    samples.push(performance.now() - t);
  }
  return samples;
}

async function parallel(items, limit, fn) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]);
    }),
  );
}

async function count(iterable) {
  let n = 0;
  for await (const _ of iterable) n++;
  return n;
}

async function benchBackend(backend, io, root, log) {
  const rows = [];
  const payload = randomBytes(1024);
  const keys = (dir, n) => Array.from({ length: n }, (_, i) => joinPath(root, dir, `k-${String(i).padStart(6, '0')}`));

  log(`${backend}: warm-up`);
  for (const p of keys('warmup', WARMUP)) {
    await io.write(p, payload);
    await io.read(p);
    await io.createIfAbsent(`${p}.cas`, payload);
  }

  log(`${backend}: createIfAbsent x${N_LATENCY}`);
  const casKeys = keys('cas', N_LATENCY);
  rows.push(latencyRow(backend, 'createIfAbsent 1 KiB (new key)', await timeEach(casKeys, (p) => io.createIfAbsent(p, payload))));
  rows.push(latencyRow(backend, 'createIfAbsent 1 KiB (key exists)', await timeEach(casKeys, (p) => io.createIfAbsent(p, payload))));

  log(`${backend}: PUT / GET x${N_LATENCY}`);
  const putKeys = keys('put', N_LATENCY);
  rows.push(latencyRow(backend, 'write (PUT) 1 KiB', await timeEach(putKeys, (p) => io.write(p, payload))));
  rows.push(latencyRow(backend, 'read (GET) 1 KiB', await timeEach(putKeys, (p) => io.read(p))));

  log(`${backend}: writing ${LIST_KEYS} keys for the listing`);
  const listDir = joinPath(root, 'list');
  const listKeys = Array.from({ length: LIST_KEYS }, (_, i) => joinPath(listDir, `p-${i % 10}`, `f-${String(i).padStart(6, '0')}.bin`));
  const tw = performance.now();
  await parallel(listKeys, WRITE_CONCURRENCY, (p) => io.write(p, 'x'));
  const writeSeconds = (performance.now() - tw) / 1000;
  rows.push({
    backend,
    operation: `write ${LIST_KEYS} tiny objects (concurrency ${WRITE_CONCURRENCY})`,
    n: LIST_KEYS,
    'total s': writeSeconds,
    'ops/s': LIST_KEYS / writeSeconds,
  });

  log(`${backend}: listing ${LIST_KEYS} keys x${LIST_REPEATS}`);
  const listSamples = [];
  for (let i = 0; i < LIST_REPEATS; i++) {
    const t = performance.now();
    const n = await count(io.list(listDir));
    listSamples.push(performance.now() - t);
    if (n !== LIST_KEYS) throw new Error(`${backend}: listed ${n} keys, expected ${LIST_KEYS}`);
  }
  const sortedList = [...listSamples].sort((a, b) => a - b);
  rows.push({
    backend,
    operation: `list ${LIST_KEYS} keys (recursive)`,
    n: LIST_REPEATS,
    'p50 ms': percentile(sortedList, 50),
    'total s': sortedList[0] / 1000,
    'ops/s': LIST_KEYS / (percentile(sortedList, 50) / 1000),
  });

  log(`${backend}: deleteMany of everything`);
  const td = performance.now();
  const all = [];
  for await (const s of io.list(root)) all.push(s.path);
  await io.deleteMany(all);
  const delSeconds = (performance.now() - td) / 1000;
  rows.push({
    backend,
    operation: `deleteMany ${all.length} keys`,
    n: all.length,
    'total s': delSeconds,
    'ops/s': all.length / delSeconds,
  });
  return rows;
}

const COLUMNS = ['backend', 'operation', 'n', 'p50 ms', 'p99 ms', 'mean ms', 'total s', 'ops/s'];

function toMarkdown(json) {
  const cell = (v) => (v === undefined ? '' : typeof v === 'number' ? (Number.isInteger(v) ? fmtInt(v) : fmtNum(v, v >= 100 ? 0 : 2)) : v);
  const e = json.environment;
  return [
    '# storage',
    '',
    json.description,
    '',
    `Run ${e.date}; node ${e.node}, ${e.platform}, ${e.cores} x ${e.cpu}, ${e.memoryGiB} GiB; took ${fmtNum(json.totalSeconds, 1)} s.`,
    '',
    markdownTable(
      COLUMNS,
      json.rows.map((r) => COLUMNS.map((c) => cell(r[c]))),
    ),
    '',
    ...json.notes.map((n) => `- ${n}`),
  ].join('\n');
}

/**
 * Runs the benchmark; writes nothing (the harness, or the standalone entry below, writes results).
 *
 * @param {{ log?: (msg: string) => void, s3?: { endpoint: string, region: string, accessKeyId: string, secretAccessKey: string, bucket: string } }} [options]
 */
export async function run(options = {}) {
  const log = options.log ?? ((m) => console.error(m));
  const s3 = options.s3;
  const started = performance.now();
  const rows = [];
  const workDir = path.join(WORK_DIR, `storage-${process.pid}`);
  await rm(workDir, { recursive: true, force: true });
  await mkdir(workDir, { recursive: true });
  const local = new LocalFileIO();
  try {
    rows.push(...(await benchBackend('local', local, workDir, log)));
  } finally {
    await local.close();
    await rm(workDir, { recursive: true, force: true });
  }
  const notes = [
    'Latency rows: N serial calls after a warm-up; ops/s = 1000 / mean latency.',
    "'list' rows: repeated full recursive listings of the same keys; total s = fastest, ops/s = keys per second at the median.",
    "'write … tiny objects' and 'deleteMany' are single timed runs.",
    'local = the repo file system (benchmarks/work/); every local write fsyncs the file and its directory.',
  ];
  if (s3) {
    const io = new S3FileIO({
      endpoint: s3.endpoint,
      region: s3.region,
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
      forcePathStyle: true,
    });
    const root = `s3://${s3.bucket}/bench/storage-${Date.now().toString(36)}`;
    try {
      rows.push(...(await benchBackend('s3 (RGW)', io, root, log)));
    } finally {
      await io.close();
    }
    notes.push(`s3 = Ceph RGW 16 (memstore OSD) at ${s3.endpoint} on the same 2-core machine as the client: loopback network, shared CPU.`);
  } else {
    notes.push('S3 rows skipped: no S3 server configured.');
  }
  const json = {
    name: 'storage',
    description:
      'FileIO through the built @tidemark/storage on local disk and on Ceph RGW: createIfAbsent and 1 KiB PUT/GET latency (serial, p50/p99), writing, listing and deleting 10,000 keys.',
    environment: environment(),
    totalSeconds: (performance.now() - started) / 1000,
    rows,
    notes,
  };
  return { name: 'storage', json, markdown: toMarkdown(json) };
}

await runIfMain(import.meta.url, () => run({ s3: s3FromEnv() }));
