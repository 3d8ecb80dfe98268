#!/usr/bin/env node
// Crash-injection harness for `tidemark ingest`. Each trial creates an append table and a
// JSON-lines source of K records (or, with `pk`, a primary-key table and a source of upserts and
// deletes of K/3 keys, with a row kind field), then runs the ingest CLI as a child process, killing it with
// SIGKILL at random moments and at the named crash points (TIDEMARK_CRASH_AT), and restarting it
// with the same arguments until it reports the source done. Finally it reads the table and checks
// that every source record is there exactly once (count, ids, per-record checksum) and that no
// in-flight record is left behind. A primary-key trial checks instead that every key holds its
// latest version (deleted keys are absent), once; its writers compact at almost every checkpoint
// (see pkCompaction), and it checks that they did, that deletion-vector and lookup tables end
// with an empty level 0, and that the replayed lookup changelog gives the source's final state.
// With `dynamic` (implies `pk`) the table has dynamic buckets (`bucket` = -1, about six buckets)
// and two or three writers: the trial also checks that no snapshot has a bucket written by two
// writers and that the hash index names every key once, in the bucket its row lives in.
//
//   npm run chaos -- --trials 500 [--records 300] [--checkpoint-every 50] [--concurrency 3] [--s3 [--faults 0.05]] [--pk | --dynamic]
//   npm run chaos -- --kafka [--pk] --trials 200 ...   (ingest from Kafka topics: test/chaos/kafka-harness.mjs)
//
// --faults RATE sends the children's S3 requests through test/support/fault-proxy.mjs, which injects
// SlowDown/500 answers, resets, truncated bodies and latency spikes into that share of requests.
//
// The children import the packages from dist: run `npx turbo run build` first. With --s3 the table
// and the checkpoint state live on the S3 server described by S3_ENDPOINT, S3_BUCKET,
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (and AWS_REGION), which are passed on to the child.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
// Seeded so that a failing trial can be replayed with its seed.
import { seededRandom as rng } from '../support/seeded-random.mjs';
import {
  checkInflightCleared,
  checksum,
  childEnv,
  crashPointsOf,
  ingestArgs,
  runOnce,
  runTrials,
  runUntilDone,
  writeChaosSchema,
} from './ingest-process.mjs';

export { checksum, childEnv, crashPointsOf, runOnce };

/** S3 settings from the environment the test runner exports, or undefined. */
export function s3EnvFromProcess(env = process.env) {
  if (!env.S3_ENDPOINT || !env.S3_BUCKET || !env.AWS_ACCESS_KEY_ID || !env.AWS_SECRET_ACCESS_KEY) return undefined;
  return {
    endpoint: env.S3_ENDPOINT,
    bucket: env.S3_BUCKET,
    region: env.AWS_REGION || 'us-east-1',
    accessKeyId: env.AWS_ACCESS_KEY_ID,
    secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
  };
}

function s3Options(s3) {
  return {
    endpoint: s3.endpoint,
    region: s3.region,
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
    forcePathStyle: true,
  };
}

/**
 * Table options of a primary-key trial: the writers compact at (almost) every checkpoint, so that
 * crashes land around checkpoints that carry a compaction. Trials take turns between plain
 * universal compaction, deletion vectors (level 0 is compacted away at every checkpoint) and
 * `changelog-producer` = `lookup` (the same, producing changelog files).
 */
export function pkCompaction(trial) {
  const base = { 'num-sorted-run.compaction-trigger': '2' };
  switch (trial % 3) {
    case 1:
      return { ...base, 'deletion-vectors.enabled': 'true' };
    case 2:
      return { ...base, 'changelog-producer': 'lookup' };
    default:
      return base;
  }
}

/**
 * What a dynamic-bucket trial must also hold: every retained snapshot adds the files of a bucket
 * from one writer (file names carry their table writer's uuid), and the latest hash index holds
 * one file per bucket, each key once, in the bucket its row lives in.
 */
async function dynamicBucketProblems(table, io, format, sourceLines) {
  const problems = [];
  const { INDEX_TYPE_HASH, decodeHashIndex, keyHash, parseTypeString, readIndexManifest, readManifestEntries, readManifestList } = format;
  const slot = (e) => `${Buffer.from(e.partition).toString('hex')}/${e.bucket}`;
  for await (const s of table.snapshotManager.iterateForward()) {
    const writers = new Map();
    for (const m of await readManifestList(io, table.paths.manifestPath(s.deltaManifestList))) {
      for await (const e of readManifestEntries(io, table.paths.manifestPath(m.fileName))) {
        if (e.kind !== 'ADD') continue;
        const writer = /^data-(.{36})-/.exec(e.file.fileName)?.[1] ?? e.file.fileName;
        writers.set(slot(e), new Set([...(writers.get(slot(e)) ?? []), writer]));
      }
    }
    for (const [where, set] of writers) {
      if (set.size > 1) problems.push(`snapshot ${s.id} (${s.commitKind}) adds files of bucket ${where} from ${set.size} writers`);
    }
  }
  const latest = await table.snapshotManager.latest();
  const hashes = new Map();
  const bucketOfHash = new Map();
  for (const e of latest.indexManifest ? await readIndexManifest(io, table.paths.manifestPath(latest.indexManifest)) : []) {
    if (e.indexType !== INDEX_TYPE_HASH) continue;
    if (hashes.has(e.bucket)) problems.push(`bucket ${e.bucket} has two hash index files`);
    const path = table.paths.indexFilePath(e.fileName);
    const set = new Set(decodeHashIndex(await io.read(path), path, e.rowCount));
    hashes.set(e.bucket, set);
    for (const h of set) {
      if (bucketOfHash.has(h)) problems.push(`key hash ${h} is indexed in buckets ${bucketOfHash.get(h)} and ${e.bucket}`);
      bucketOfHash.set(h, e.bucket);
    }
  }
  // Deleted keys keep their place in the index: it holds every key the source ever inserted.
  const inserted = new Set(
    sourceLines
      .map((l) => JSON.parse(l))
      .filter((r) => r.op !== '-D')
      .map((r) => r.id),
  );
  if (bucketOfHash.size !== inserted.size)
    problems.push(`the hash index holds ${bucketOfHash.size} keys, the source inserted ${inserted.size}`);
  const BIGINT = [parseTypeString('BIGINT NOT NULL')];
  for (const bucket of hashes.keys()) {
    const ids = (await table.newRead({ bucket }).toArrowTable()).getChild('id');
    for (let i = 0; i < (ids?.length ?? 0); i++) {
      const id = BigInt(ids.get(i));
      const h = keyHash(BIGINT, [id]);
      if (bucketOfHash.get(h) !== bucket) problems.push(`key ${id} lives in bucket ${bucket}, indexed in ${bucketOfHash.get(h)}`);
    }
  }
  return problems;
}

/**
 * Runs one trial. Returns { ok, runs, kills: {point|'random'|...: n}, problems: [...], seed }.
 */
export async function runTrial(config) {
  const { trial, seed, records: K, checkpointEvery, s3, workDir, maxRuns = 60, crashRate = 0.85, dynamic = false } = config;
  const pk = config.pk === true || dynamic;
  const rand = rng(seed);
  // Dynamic buckets: at least two writers, so buckets are spread over writers that compact them.
  const parallelism = dynamic ? 2 + Math.floor(rand() * 2) : 1 + Math.floor(rand() * 3);
  const { LocalFileIO, S3FileIO } = await import('@tidemark/storage');
  const { openTable, listInflightRecords, liveEntries } = await import('@tidemark/core');
  const format = await import('@tidemark/format');
  const { CRASH_POINTS: ALL_POINTS } = await import('@tidemark/sink');
  const CRASH_POINTS = crashPointsOf(ALL_POINTS, pk);

  const dir = join(workDir, `trial-${trial}`);
  const base = s3 ? `s3://${s3.bucket}/${config.s3Prefix}/trial-${trial}` : dir;
  const tablePath = `${base}/db.db/t`;
  const statePath = `${base}/state`;
  const io = s3 ? new S3FileIO(s3Options(s3)) : new LocalFileIO();
  const problems = [];
  const kills = {};
  let runs = 0;
  try {
    await writeChaosSchema(io, tablePath, {
      pk,
      rand,
      options: {
        ...(pk ? pkCompaction(trial) : {}),
        // About six buckets over the K/3 keys.
        ...(dynamic ? { bucket: '-1', 'dynamic-bucket.target-row-num': String(Math.max(2, Math.ceil(K / 18))) } : {}),
      },
    });
    const lines = [];
    // id → checksum of the row the table must hold at the end (a deleted key is absent).
    const expected = new Map();
    if (pk) {
      const keys = Math.max(1, Math.floor(K / 3));
      for (let i = 0; i < K; i++) {
        const id = Math.floor(rand() * keys);
        if (expected.has(id) && rand() < 0.15) {
          expected.delete(id);
          lines.push(JSON.stringify({ id, op: '-D' }));
          continue;
        }
        // The record number makes every version distinct, so a stale version fails the checksum.
        const payload = `${i}:${randomBytes(4 + Math.floor(rand() * 12)).toString('base64')}`;
        const sum = checksum(id, payload);
        lines.push(JSON.stringify({ id, payload, checksum: sum, op: expected.has(id) ? '+U' : '+I' }));
        expected.set(id, sum);
      }
    } else {
      for (let i = 0; i < K; i++) {
        const payload = randomBytes(6 + Math.floor(rand() * 20)).toString('base64');
        const sum = checksum(i, payload);
        expected.set(i, sum);
        lines.push(JSON.stringify({ id: i, payload, checksum: sum }));
      }
    }
    const { mkdir } = await import('node:fs/promises');
    await mkdir(dir, { recursive: true });
    const sourcePath = join(dir, 'source.jsonl');
    await writeFile(sourcePath, `${lines.join('\n')}\n`);
    const args = ingestArgs({ tablePath, source: sourcePath, statePath, checkpointEvery, parallelism });
    if (pk) args.push('--row-kind-field', 'op');

    let resequencedFiles = 0;
    let droppedCompactions = 0;
    const ended = await runUntilDone({
      args,
      s3,
      plan: {
        trial,
        points: CRASH_POINTS,
        maxRuns,
        crashRate,
        rand,
        maxCount: Math.max(1, Math.ceil(K / checkpointEvery)),
        killMs: [50, 1500],
      },
      kills,
      problems,
      finishes: (summary) => summary.status === 'source-done',
      onOutput: (err) => {
        // Checkpoint lines of every run, killed ones included: what re-sequencing cost.
        for (const m of err.matchAll(/\((\d+) files re-sequenced\)/g)) resequencedFiles += Number(m[1]);
        droppedCompactions += err.match(/\(compaction dropped\)/g)?.length ?? 0;
      },
    });
    runs = ended.runs;
    const { summary, done } = ended;

    let lost = 0;
    let duplicated = 0;
    let corrupt = 0;
    if (done) {
      const table = await openTable(tablePath, { fileIO: io });
      const data = await table.newRead().toArrowTable();
      const ids = data.getChild('id');
      const payloads = data.getChild('payload');
      const sums = data.getChild('checksum');
      const seen = new Map();
      for (let i = 0; i < data.numRows; i++) {
        const id = Number(ids.get(i));
        seen.set(id, (seen.get(id) ?? 0) + 1);
        const want = expected.get(id);
        if (want === undefined || sums.get(i) !== want || checksum(id, payloads.get(i)) !== want) corrupt++;
      }
      for (const id of expected.keys()) {
        const n = seen.get(id) ?? 0;
        if (n === 0) lost++;
        if (n > 1) duplicated += n - 1;
      }
      if (data.numRows !== expected.size)
        problems.push(`table holds ${data.numRows} rows, ${pk ? 'the source leaves' : 'source has'} ${expected.size}`);
      if (lost > 0) problems.push(`${lost} ${pk ? 'keys' : 'records'} lost`);
      if (duplicated > 0) problems.push(`${duplicated} duplicate ${pk ? 'keys' : 'records'}`);
      if (corrupt > 0) problems.push(`${corrupt} rows with a wrong checksum${pk ? ' (a stale version, or a deleted key back)' : ''}`);
      let compactions = 0;
      if (pk) {
        // The writers compacted (COMPACT snapshots among the retained ones), and tables whose
        // writers empty level 0 at every checkpoint (deletion vectors, lookup) end with none there:
        // a compaction cut off by a crash was finished by the restore.
        for await (const s of table.snapshotManager.iterateForward()) if (s.commitKind === 'COMPACT') compactions++;
        if (compactions === 0) problems.push('no COMPACT snapshot: the writers did not compact');
        if (trial % 3 !== 0) {
          const latest = await table.snapshotManager.latest();
          let level0 = 0;
          for (const e of (await liveEntries(io, table.paths, latest)).values()) if (e.file.level === 0) level0++;
          if (level0 > 0) problems.push(`${level0} level-0 files left in a table whose writers compact level 0 at every checkpoint`);
        }
        if (dynamic) problems.push(...(await dynamicBucketProblems(table, io, format, lines)));
        if (trial % 3 === 2) {
          // `lookup` changelog: the earliest retained snapshot plus every changelog after it,
          // replayed, must give the table (a changelog lost or committed twice shows here).
          const replay = new Map();
          const last = await table.snapshotManager.latestId();
          for await (const b of table.newStreamRead({ from: 'earliest', to: last, pollIntervalMs: 1 })) {
            for (const r of b.batch.toArray()) {
              const o = r.toJSON();
              if (o._row_kind === '+I' || o._row_kind === '+U') replay.set(Number(o.id), o.checksum);
              else replay.delete(Number(o.id));
            }
          }
          let wrong = replay.size === expected.size ? 0 : Math.abs(replay.size - expected.size);
          for (const [id, sum] of expected) if (replay.get(id) !== sum) wrong++;
          if (wrong > 0) problems.push(`the replayed lookup changelog differs from the source in ${wrong} keys`);
        }
      }
      await checkInflightCleared(listInflightRecords, io, tablePath, summary.commitUser, problems);
      return {
        ok: problems.length === 0,
        trial,
        seed,
        parallelism,
        pk,
        runs,
        kills,
        lost,
        duplicated,
        corrupt,
        compactions,
        resequencedFiles,
        droppedCompactions,
        problems,
      };
    }
    return {
      ok: false,
      trial,
      seed,
      parallelism,
      runs,
      kills,
      lost: 0,
      duplicated: 0,
      corrupt: 0,
      resequencedFiles,
      droppedCompactions,
      problems,
    };
  } finally {
    await io.close();
    if (!config.keep) await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Runs `trials` trials (`concurrency` at a time) and returns the tally.
 * Options: { trials, records, checkpointEvery, concurrency, crashRate (share of runs that get
 * killed, default 0.85), s3, seed, log }.
 */
export async function runChaos(options) {
  const {
    trials,
    records = 300,
    checkpointEvery = 50,
    concurrency = 3,
    crashRate = 0.85,
    s3,
    dynamic = false,
    log = () => undefined,
  } = options;
  const pk = options.pk === true || dynamic;
  const seed0 = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  const workDir = await mkdtemp(join(tmpdir(), 'tidemark-chaos-'));
  const s3Prefix = `tests/chaos-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
  const { tally, sum } = await runTrials({
    trials,
    concurrency,
    seed0,
    runTrial: (trial, seed) =>
      runTrial({ trial, seed, records, checkpointEvery, crashRate, s3, s3Prefix, workDir, keep: options.keep, pk, dynamic }),
    describe: (r) => (pk ? `, ${r.resequencedFiles ?? 0} files re-sequenced, ${r.droppedCompactions ?? 0} compactions dropped` : ''),
    log,
  });
  if (!options.keep) await rm(workDir, { recursive: true, force: true });
  return {
    storage: s3 ? (s3.childEndpoint ? 's3 through FaultProxy' : 's3') : 'local',
    table: dynamic ? 'primary-key, dynamic buckets' : pk ? 'primary-key' : 'append',
    records,
    checkpointEvery,
    ...tally,
    corrupt: sum('corrupt'),
    compactSnapshots: sum('compactions'),
    // What the commit's sequence-order guard cost: files rewritten, compactions dropped and redone.
    resequencedFiles: sum('resequencedFiles'),
    droppedCompactions: sum('droppedCompactions'),
  };
}

function parseCli(argv) {
  const o = {
    trials: 20,
    records: 300,
    checkpointEvery: 50,
    concurrency: 3,
    s3: false,
    keep: false,
    seed: undefined,
    pk: false,
    dynamic: false,
    faults: 0,
    kafka: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const num = () => {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < 1) throw new Error(`${a} needs a positive integer`);
      return v;
    };
    if (a === '--trials') o.trials = num();
    else if (a === '--records') o.records = num();
    else if (a === '--checkpoint-every') o.checkpointEvery = num();
    else if (a === '--concurrency') o.concurrency = num();
    else if (a === '--seed') o.seed = num();
    else if (a === '--crash-rate') o.crashRate = Number(argv[++i]);
    else if (a === '--s3') o.s3 = true;
    else if (a === '--faults') o.faults = Number(argv[++i]);
    else if (a === '--keep') o.keep = true;
    else if (a === '--pk') o.pk = true;
    else if (a === '--dynamic') o.dynamic = true;
    else if (a === '--kafka') o.kafka = true;
    else
      throw new Error(
        `unknown option ${a} (use --trials N --records K --checkpoint-every C --concurrency J --seed S --s3 [--faults RATE] --keep --pk --dynamic --kafka)`,
      );
  }
  return o;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const o = parseCli(process.argv.slice(2));
  if (o.kafka) {
    if (o.s3 || o.dynamic) {
      console.error('chaos: --kafka runs on local disk with --pk or append tables (no --s3, --dynamic)');
      process.exit(2);
    }
    const { runKafkaChaos } = await import('./kafka-harness.mjs');
    const tally = await runKafkaChaos({ ...o, log: (m) => console.error(`[chaos kafka] ${m}`) });
    console.log(JSON.stringify(tally, null, 2));
    process.exit(tally.passed === tally.trials ? 0 : 1);
  }
  const s3 = o.s3 ? s3EnvFromProcess() : undefined;
  if (o.s3 && !s3) {
    console.error('chaos: --s3 needs S3_ENDPOINT, S3_BUCKET, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (see test/s3/start-server.sh)');
    process.exit(2);
  }
  let proxy;
  if (o.faults > 0) {
    if (!s3) {
      console.error('chaos: --faults needs --s3');
      process.exit(2);
    }
    const { FaultProxy } = await import('../support/fault-proxy.mjs');
    proxy = new FaultProxy(s3.endpoint, { rate: o.faults, seed: o.seed ?? 1 });
    s3.childEndpoint = await proxy.listen();
  }
  const tally = await runChaos({ ...o, s3, log: (m) => console.error(`[chaos] ${m}`) });
  if (proxy) {
    Object.assign(tally, { faultRate: o.faults, requests: proxy.requests, faultsInjected: proxy.faults, faultsByKind: proxy.injected });
    await proxy.close();
  }
  console.log(JSON.stringify(tally, null, 2));
  process.exit(tally.passed === tally.trials ? 0 : 1);
}
