// Storage latencies through the public FileIO API of the built @tidemark/storage (dist), on local
// disk and on the S3 server (Ceph RGW on memstore, same machine): createIfAbsent, small PUT and
// GET (1 KiB) one at a time, and listing 10,000 keys. Each latency row is N serial operations
// after a warm-up; list rows are repeated full recursive listings of the same 10,000 keys.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { LocalFileIO, S3FileIO, joinPath } from '@tidemark/storage';

const N_LATENCY = 300;
const WARMUP = 20;
const LIST_KEYS = 10_000;
const LIST_REPEATS = 5;
const WRITE_CONCURRENCY = 32;

function percentile(sorted, p) {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

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
    'ops/s (serial)': 1000 / mean,
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
  rows.push(
    latencyRow(backend, 'createIfAbsent 1 KiB (key exists)', await timeEach(casKeys, (p) => io.createIfAbsent(p, payload))),
  );

  log(`${backend}: PUT / GET x${N_LATENCY}`);
  const putKeys = keys('put', N_LATENCY);
  rows.push(latencyRow(backend, 'write (PUT) 1 KiB', await timeEach(putKeys, (p) => io.write(p, payload))));
  rows.push(latencyRow(backend, 'read (GET) 1 KiB', await timeEach(putKeys, (p) => io.read(p))));

  log(`${backend}: writing ${LIST_KEYS} keys for the listing`);
  const listDir = joinPath(root, 'list');
  const listKeys = Array.from({ length: LIST_KEYS }, (_, i) =>
    joinPath(listDir, `p-${i % 10}`, `f-${String(i).padStart(6, '0')}.bin`),
  );
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

export default {
  name: 'storage',
  description:
    'FileIO latency on local disk and on Ceph RGW (memstore, 127.0.0.1): createIfAbsent, 1 KiB PUT/GET (serial, p50/p99), listing 10,000 keys',
  async run({ s3, workDir, log }) {
    const rows = [];
    const local = new LocalFileIO();
    rows.push(...(await benchBackend('local', local, workDir, log)));
    await local.close();
    const notes = [
      "'ops/s (serial)' is 1000 / mean latency of one-at-a-time calls; 'list' ops/s is keys listed per second at the median.",
      "'list' total s is the fastest of the repeats; 'write … tiny objects' and 'deleteMany' are single timed runs.",
      'local = the repo file system (benchmarks/work/); every local write is fsynced (file and directory).',
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
      notes.push(`s3 = Ceph RGW 16 at ${s3.endpoint} on the same 2-core machine (memstore OSD), so network latency is loopback only.`);
    } else {
      notes.push('S3 rows skipped: no S3 server (TIDEMARK_S3=off).');
    }
    return { rows, notes };
  },
};
