/**
 * Maintenance benchmark, on local disk and on the S3 server:
 * - snapshot expiration of a 3,000-snapshot overwrite history in one run: files deleted / s and
 *   peak RSS, next to the store alone (GETs/s at 1, 8, 32 in flight, DeleteObjects keys/s at 1 and
 *   4 in flight) and the CPU the client and the S3 server used;
 * - orphan scanning (removeOrphanFiles with the default 1-day threshold, so it lists and checks
 *   but deletes nothing) of a table directory holding 10k objects (more with --objects): objects / s and
 *   peak RSS (the used set is small, so peak RSS must not grow with the object count);
 * - compaction MB/s (compactAppendTable, full) against a raw read + rewrite of the same Parquet
 *   files with parquet-wasm (readParquet + writeParquet, zstd) and no table logic.
 *
 *   node benchmarks/maintenance.bench.mjs [--snapshots 3000] [--s3-snapshots 3000] [--objects 10000] [--s3-objects 10000]
 *     [--only expire]
 *
 * `--only expire` runs the expiration rows alone and saves them as `maintenance-expire` (so the full
 * result files are not replaced by a partial run).
 *
 * Every measurement runs in a fresh child process (lib/maintenance-tasks.mjs). The history table is
 * built once with FileStoreCommit on local disk (kept under benchmarks/work/ as a template: about
 * 30 ms per commit here, so 10k commits take minutes) and copied per run; the S3 copy is uploaded
 * from it. Imports the BUILT packages.
 */
import { cp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { benchBackends } from './lib/bench-storage.mjs';
import { runChild, taskRunner } from './lib/measure.mjs';
import { WORK_DIR, environment, fmtInt, fmtNum, markdownTable, problemsSection, s3Note, resultHeading } from './lib/report.mjs';
import { runStandalone } from './lib/standalone.mjs';

export const name = 'maintenance';

/** Expiration phases, in the order a run goes through them. */
const PHASES = ['leftover-snapshots', 'reading-deltas', 'data-files', 'changelog-files', 'manifests', 'manifest-lists', 'snapshots'];

const TASKS = new URL('./lib/maintenance-tasks.mjs', import.meta.url);
const TIMEOUT_MS = 900_000;
/** Objects the store-alone measurement reads (each once per in-flight level) and deletes (per level). */
const STORE_GETS = 2000;
const STORE_DELETE_KEYS = 5000;
const RETAIN = 5;

async function exists(p) {
  return stat(p).then(
    () => true,
    () => false,
  );
}

/**
 * @param {{ log?: (msg: string) => void, s3?: object, snapshots?: number, s3Snapshots?: number, objects?: number[],
 *   s3Objects?: number[], compactFiles?: number, compactRows?: number, only?: 'expire' }} [options]
 */
export async function run(options = {}) {
  const expireOnly = options.only === 'expire';
  const runName = expireOnly ? `${name}-expire` : name;
  const log = options.log ?? ((m) => console.error(m));
  // Defaults sized so that a run takes minutes on the shared machine (the results so far are of
  // these sizes); larger ones with the flags.
  const snapshots = options.snapshots ?? 3_000;
  const objects = options.objects ?? [10_000];
  const s3Objects = options.s3Objects ?? [10_000];
  const s3Snapshots = options.s3Snapshots ?? 3_000;
  const compact = { files: options.compactFiles ?? 100, rows: options.compactRows ?? 5_000 };
  const started = performance.now();
  // The machine is shared: the 1-minute load average at the start and the end says how much.
  const loadAtStart = os.loadavg()[0];
  const expire = [];
  const orphans = [];
  const compaction = [];
  const problems = [];
  const templates = historyTemplates(log);
  const backends = benchBackends(name, options.s3, (b) => ({
    objects: b.s3 ? s3Objects : objects,
    snapshots: b.s3 ? s3Snapshots : snapshots,
  }));
  for (const b of backends) {
    const task = taskRunner(TASKS, b, TIMEOUT_MS);
    const table = `${b.root}/bench.db/m`;
    await copyHistory(task, b, table, await templates.of(b.snapshots), log);
    expire.push(await measureExpiration(task, b, table, problems, log));
    if (!expireOnly) {
      orphans.push(...(await measureOrphanScans(task, b, table, problems, log)));
      compaction.push(await measureCompaction(task, b, compact, log));
    }
    if (!b.s3) await rm(b.root, { recursive: true, force: true });
  }

  const json = {
    name: runName,
    expireOnly,
    date: new Date().toISOString(),
    environment: environment(),
    snapshots,
    s3Snapshots,
    builds: templates.builds,
    expire,
    orphans,
    compaction,
    problems,
    seconds: (performance.now() - started) / 1000,
    loadAverage: [loadAtStart, os.loadavg()[0]],
    s3: options.s3 ? { endpoint: options.s3.endpoint } : undefined,
  };
  return { name: runName, json, markdown: markdown(json) };
}

/**
 * The overwrite histories, built once per snapshot count with FileStoreCommit and kept under
 * benchmarks/work/ as templates; `builds` records the ones built in this run (count -> ms).
 */
function historyTemplates(log) {
  const builds = {};
  const of = async (n) => {
    const template = path.join(WORK_DIR, `maintenance-history-${n}`);
    const table = path.join(template, 'bench.db', 'm');
    if (!(await exists(path.join(table, 'snapshot', `snapshot-${n}`)))) {
      await rm(template, { recursive: true, force: true });
      log(`building a ${n}-snapshot history with FileStoreCommit (once; kept in ${path.relative(process.cwd(), template)})`);
      const build = await runChild(TASKS, 'history', { warehouse: template, snapshots: n }, { timeoutMs: TIMEOUT_MS });
      builds[n] = build.buildMs;
      log(`built in ${(build.buildMs / 1000).toFixed(1)} s: ${build.files} files`);
    } else {
      log(`reusing the history template ${path.relative(process.cwd(), template)}`);
    }
    return { template, table };
  };
  return { builds, of };
}

/** Puts a copy of the history template at `table` (uploaded to S3, copied on local disk). */
async function copyHistory(task, b, table, { template, table: templateTable }, log) {
  if (b.s3) {
    log(`${b.backend}: uploading the history (${b.snapshots} snapshots)`);
    const up = await task('upload', { dir: templateTable, target: table });
    log(`uploaded ${up.objects} objects in ${(up.uploadMs / 1000).toFixed(1)} s`);
  } else {
    await cp(template, b.root, { recursive: true });
  }
}

/** Expires all but {@link RETAIN} snapshots of the history, then measures the store alone under the same load. */
async function measureExpiration(task, b, table, problems, log) {
  log(`${b.backend}: expiring ${b.snapshots - RETAIN} snapshots`);
  const e = await task('expire', { table, retainMin: RETAIN });
  // Right after the run, under the same load: the store alone, for the reads and the batched
  // deletes expiration needs.
  const st = await task('store-rate', { table, gets: STORE_GETS, deleteKeys: STORE_DELETE_KEYS });
  const gets = e.requests.read + e.requests.readRange + e.requests.exists;
  if (e.snapshotsExpired !== b.snapshots - RETAIN)
    problems.push(`${b.backend}: expired ${e.snapshotsExpired} snapshots, expected ${b.snapshots - RETAIN}`);
  const getsAt = (n) => st.getRates.find((r) => r.inFlight === n)?.getsPerSec;
  const deletesAt = (n) => st.deleteRates.find((r) => r.inFlight === n)?.keysPerSec;
  // Expiration keeps 16 snapshots' reads (a few requests each) and 4 DeleteObjects requests in flight.
  const storeGets = Math.max(...st.getRates.map((r) => r.getsPerSec));
  const storeDeletes = Math.max(...st.deleteRates.map((r) => r.keysPerSec));
  const getsPerFile = gets / e.filesDeleted;
  log(
    `${b.backend}: store alone: GETs/s ${[1, 8, 32].map((n) => `${n} in flight ${fmtInt(getsAt(n) ?? 0)}`).join(', ')}; ` +
      `DeleteObjects keys/s ${[1, 4].map((n) => `${n} in flight ${fmtInt(deletesAt(n) ?? 0)}`).join(', ')}; ` +
      `${fmtNum(getsPerFile, 2)} reads per file`,
  );
  log(`${b.backend}: ${fmtInt(e.filesDeleted)} files in ${(e.ms / 1000).toFixed(1)} s, peak RSS ${fmtNum(e.peakRssMiB)} MiB`);
  log(`${b.backend}: requests ${JSON.stringify(e.requests)}; phases start at ${JSON.stringify(e.phases)}`);
  return {
    backend: b.backend,
    snapshots: e.snapshotsExpired,
    filesDeleted: e.filesDeleted,
    seconds: e.ms / 1000,
    filesPerSec: e.filesDeleted / (e.ms / 1000),
    snapshotsPerSec: e.snapshotsExpired / (e.ms / 1000),
    peakRssMiB: e.peakRssMiB,
    importRssMiB: e.importRssMiB,
    requests: e.requests,
    phases: e.phases,
    clientCpuMs: e.clientCpuMs,
    serverCpuMs: e.serverCpuMs,
    store: st,
    storeGetsPerSec: storeGets,
    storeDeleteKeysPerSec: storeDeletes,
    getsPerFile,
    // If reads were all it did, at the store's best GET rate.
    readBoundFilesPerSec: storeGets / getsPerFile,
    // If deletes were all it did (every file is one key of a DeleteObjects request).
    deleteBoundFilesPerSec: storeDeletes,
    // Reads and deletes one after the other, each at the store's best rate: the bound when the
    // store (or the machine's CPU it shares) serves one kind at a time.
    serialBoundFilesPerSec: 1 / (getsPerFile / storeGets + 1 / storeDeletes),
    // CPU (client + S3 server) per file deleted, from the store-alone costs per GET and per
    // deleted key, and what the machine's cores allow at that cost if they did nothing else.
    ...cpuBound(st, getsPerFile),
  };
}

/** Orphan scans of the table with `b.objects` young orphan objects added (each count in turn). */
async function measureOrphanScans(task, b, table, problems, log) {
  const rows = [];
  let have = 0;
  for (const n of b.objects) {
    log(`${b.backend}: adding ${n - have} objects (total ${n})`);
    await task('orphan-objects', { table, count: n - have, offset: have });
    have = n;
    const o = await task('orphans', { table });
    if (o.filesDeleted !== 0) problems.push(`${b.backend}: the orphan scan deleted ${o.filesDeleted} files (all are younger than 1 day)`);
    rows.push({
      backend: b.backend,
      objects: o.filesScanned,
      seconds: o.ms / 1000,
      objectsPerSec: o.filesScanned / (o.ms / 1000),
      peakRssMiB: o.peakRssMiB,
      importRssMiB: o.importRssMiB,
    });
    log(`${b.backend}: scanned ${fmtInt(o.filesScanned)} objects in ${(o.ms / 1000).toFixed(1)} s, peak RSS ${fmtNum(o.peakRssMiB)} MiB`);
  }
  return rows;
}

/** Full append compaction of `files` small files against a raw parquet-wasm rewrite of the same files. */
async function measureCompaction(task, b, { files, rows }, log) {
  log(`${b.backend}: compaction of ${files} files x ${rows} rows`);
  const data = await task('compact-data', { warehouse: `${b.root}/c`, files, rows });
  const raw = await task('raw-rewrite', { files: data.files, target: `${b.root}/raw` });
  const c = await task('compact', { table: data.table });
  const mb = (n) => n / 1e6;
  return {
    backend: b.backend,
    files: c.filesBefore,
    filesAfter: c.filesAfter,
    inputMB: mb(c.bytesRead),
    compactMBps: mb(c.bytesRead) / (c.ms / 1000),
    rawMBps: mb(raw.bytesRead) / (raw.ms / 1000),
    compactSeconds: c.ms / 1000,
    rawSeconds: raw.ms / 1000,
    compactPeakRssMiB: c.peakRssMiB,
    rawPeakRssMiB: raw.peakRssMiB,
  };
}

/** Cores of the machine, shared by the client and the S3 server. */
const CORES = os.cpus().length;

/**
 * CPU milliseconds per file deleted that the store-alone costs imply (reads at 32 in flight,
 * deletes at 4), client and S3 server together, and the files/s all cores allow at that cost.
 * Undefined when the server's CPU is not visible (no S3 server on this machine, local disk).
 */
function cpuBound(st, getsPerFile) {
  const g = st.getRates.find((r) => r.inFlight === 32);
  const d = st.deleteRates.find((r) => r.inFlight === 4);
  if (!g || !d || g.serverCpuMs === null || d.serverCpuMs === null) return {};
  const perGet = (g.clientCpuMs + g.serverCpuMs) / g.gets;
  const perKey = (d.clientCpuMs + d.serverCpuMs) / d.keys;
  const cpuMsPerFile = getsPerFile * perGet + perKey;
  return { storeCpuMsPerFile: cpuMsPerFile, cpuBoundFilesPerSec: (CORES * 1000) / cpuMsPerFile };
}

/** The result page of a run's JSON (exported to re-render saved results). */
export function markdown(json) {
  return [
    ...resultHeading('Maintenance benchmark', json),
    `## Snapshot expiration (overwrite history of ${fmtInt(json.snapshots)} snapshots locally${json.s3 ? `, ${fmtInt(json.s3Snapshots)} on S3` : ''}; one run, ${RETAIN} retained)`,
    '',
    markdownTable(
      [
        'backend',
        'snapshots expired',
        'files deleted',
        'seconds',
        'files/s',
        'snapshots/s',
        'delete batches (DeleteObjects on S3)',
        'single deletes',
        'reads',
        'writes',
        'peak RSS MiB',
      ],
      json.expire.map((r) => [
        r.backend,
        fmtInt(r.snapshots),
        fmtInt(r.filesDeleted),
        fmtNum(r.seconds),
        fmtInt(r.filesPerSec),
        fmtInt(r.snapshotsPerSec),
        r.requests ? fmtInt(r.requests.deleteObjects) : '',
        r.requests ? fmtInt(r.requests.delete) : '',
        r.requests ? fmtInt(r.requests.read + r.requests.readRange) : '',
        r.requests ? fmtInt(r.requests.write) : '',
        fmtNum(r.peakRssMiB),
      ]),
    ),
    '',
    'The store alone, measured right after the run under the same load (no table logic; 2 KB objects; GETs each object once per level; DeleteObjects with 1,000 keys per request):',
    '',
    markdownTable(
      [
        'backend',
        'GETs/s, 1 in flight',
        'GETs/s, 8 in flight',
        'GETs/s, 32 in flight',
        'DeleteObjects keys/s, 1 in flight',
        'DeleteObjects keys/s, 4 in flight',
        'client CPU ms per GET (32)',
        'server CPU ms per GET (32)',
        'client CPU ms per deleted key (4)',
        'server CPU ms per deleted key (4)',
      ],
      json.expire.map((r) => {
        const g = (n) => r.store?.getRates.find((x) => x.inFlight === n);
        const d = (n) => r.store?.deleteRates.find((x) => x.inFlight === n);
        const per = (x, v, n) => (x && v !== null && v !== undefined ? fmtNum(v / n, 2) : '');
        return [
          r.backend,
          g(1) ? fmtInt(g(1).getsPerSec) : '',
          g(8) ? fmtInt(g(8).getsPerSec) : '',
          g(32) ? fmtInt(g(32).getsPerSec) : '',
          d(1) ? fmtInt(d(1).keysPerSec) : '',
          d(4) ? fmtInt(d(4).keysPerSec) : '',
          per(g(32), g(32)?.clientCpuMs, g(32)?.gets),
          per(g(32), g(32)?.serverCpuMs, g(32)?.gets),
          per(d(4), d(4)?.clientCpuMs, d(4)?.keys),
          per(d(4), d(4)?.serverCpuMs, d(4)?.keys),
        ];
      }),
    ),
    '',
    `The bound the store sets for expiration: its best GET rate divided by the reads expiration needs per file deleted, its best DeleteObjects rate (every file is one key), both one after the other (the bound when the store, or the CPU it shares with the client, serves one kind at a time), and the CPU bound: the client + S3 server CPU per file at the store-alone costs per GET and per deleted key, and the files/s the machine's ${CORES} cores allow at that cost if they did nothing else (the wall-clock rates move with the other jobs' load; the CPU per request does not):`,
    '',
    markdownTable(
      [
        'backend',
        'reads per file deleted',
        'read-bound files/s',
        'delete-bound files/s',
        'reads + deletes bound files/s',
        'CPU ms per file (store alone)',
        `CPU-bound files/s (${CORES} cores)`,
        'measured files/s',
        'measured ÷ reads + deletes bound',
      ],
      json.expire.map((r) => [
        r.backend,
        r.getsPerFile === undefined ? '' : fmtNum(r.getsPerFile, 2),
        r.readBoundFilesPerSec === undefined ? '' : fmtInt(r.readBoundFilesPerSec),
        r.deleteBoundFilesPerSec === undefined ? '' : fmtInt(r.deleteBoundFilesPerSec),
        r.serialBoundFilesPerSec === undefined ? '' : fmtInt(r.serialBoundFilesPerSec),
        r.storeCpuMsPerFile === undefined ? '' : fmtNum(r.storeCpuMsPerFile, 2),
        r.cpuBoundFilesPerSec === undefined ? '' : fmtInt(r.cpuBoundFilesPerSec),
        fmtInt(r.filesPerSec),
        r.serialBoundFilesPerSec === undefined ? '' : fmtNum(r.filesPerSec / r.serialBoundFilesPerSec, 2),
      ]),
    ),
    '',
    "Where the run's time goes: the read pass (start to the first delete phase), the deletes, and the CPU the client and the S3 server used (2 cores on this machine, shared with other jobs):",
    '',
    markdownTable(
      [
        'backend',
        'seconds',
        'read pass s',
        'delete phases s',
        'client CPU s',
        'S3 server CPU s',
        '(client + server CPU) ÷ wall',
        'CPU ms per file',
        `files/s if the ${CORES} cores did only this`,
      ],
      json.expire.map((r) => {
        const readEnd = r.phases?.['data-files'];
        const cpu = (r.clientCpuMs ?? 0) + (r.serverCpuMs ?? 0);
        return [
          r.backend,
          fmtNum(r.seconds),
          readEnd === undefined ? '' : fmtNum(readEnd),
          readEnd === undefined ? '' : fmtNum(r.seconds - readEnd),
          r.clientCpuMs === undefined ? '' : fmtNum(r.clientCpuMs / 1000),
          r.serverCpuMs === null || r.serverCpuMs === undefined ? '' : fmtNum(r.serverCpuMs / 1000),
          r.clientCpuMs === undefined ? '' : fmtNum(cpu / 1000 / r.seconds, 2),
          r.clientCpuMs === undefined ? '' : fmtNum(cpu / r.filesDeleted, 2),
          r.clientCpuMs === undefined || !cpu ? '' : fmtInt((CORES * 1000 * r.filesDeleted) / cpu),
        ];
      }),
    ),
    '',
    'Progress events by phase (seconds from the start of the run to the first event of each phase; a delete phase reports after its first 1,000 files or at its end):',
    '',
    markdownTable(
      ['backend', ...PHASES],
      json.expire.map((r) => [r.backend, ...PHASES.map((p) => (r.phases?.[p] === undefined ? '' : fmtNum(r.phases[p])))]),
    ),
    '',
    ...(json.expireOnly ? ['(`--only expire`: orphan scan and compaction not run.)', ''] : []),
    ...(json.expireOnly ? [] : orphanAndCompaction(json)),
    '## Notes',
    '',
    `- Histories are built once with FileStoreCommit (one commit per snapshot, fsync skipped for the scratch table; about 15-30 ms per commit on this machine) and kept in benchmarks/work/ as templates${
      Object.keys(json.builds).length
        ? `; built in this run: ${Object.entries(json.builds)
            .map(([n, ms]) => `${n} snapshots in ${fmtNum(ms / 1000)} s`)
            .join(', ')}`
        : ''
    }.`,
    '- Each expired snapshot frees one data file, its delta manifest, its manifest lists and the snapshot file; expiration reads snapshots, manifest lists and manifests in one pass, up to 16 snapshots at a time (the window starts at 1 and doubles while snapshots keep expiring), and deletes every kind of file in batches (S3 DeleteObjects, 1,000 keys per request, 4 requests in flight, no existence checks). Snapshot files go last, 1,000 per batch, oldest batch first, each batch after EARLIEST was moved past it (so an interruption leaves no gap in the chain). Request counts are FileIO calls; a deleteMany call counts one batch per 1,000 keys.',
    '- Orphan objects are written into the bucket directory, all younger than the threshold (writing them is not timed).',
    json.s3 && json.s3Snapshots < json.snapshots
      ? `- S3 expiration runs on a ${fmtInt(json.s3Snapshots)}-snapshot history (set with --s3-snapshots).`
      : null,
    s3Note(
      json.s3,
      ". The server is shared with other agents' tests too: its CPU (radosgw + ceph-osd, read from /proc) counts their requests as well, so the server CPU figures are upper bounds of this run's share, and wall-clock rates vary by 2-3x between runs minutes apart",
    ),
    '- Peak RSS is the whole child process (Node + WASM runtime included); orphan rows at several object counts (--objects 10000,100000) show it does not grow with the count.',
    `- Machine: 2 shared cores with other jobs running (other agents were building and testing during this run${
      json.loadAverage
        ? `; 1-minute load average ${fmtNum(json.loadAverage[0])} at the start, ${fmtNum(json.loadAverage[1])} at the end`
        : ''
    }); treat single figures as ±30 %.`,
    ...problemsSection(json.problems),
  ]
    .filter((l) => l !== null)
    .join('\n');
}

/** The orphan-scan and compaction sections (not part of an `--only expire` run). */
function orphanAndCompaction(json) {
  return [
    '## Orphan scan (removeOrphanFiles, default 1-day threshold: lists and checks every object, deletes none)',
    '',
    markdownTable(
      ['backend', 'objects scanned', 'seconds', 'objects/s', 'peak RSS MiB'],
      json.orphans.map((r) => [r.backend, fmtInt(r.objects), fmtNum(r.seconds), fmtInt(r.objectsPerSec), fmtNum(r.peakRssMiB)]),
    ),
    '',
    '## Compaction (compactAppendTable, full) vs raw parquet-wasm read + rewrite of the same files',
    '',
    markdownTable(
      [
        'backend',
        'input files',
        'output files',
        'input MB',
        'compaction MB/s',
        'raw read+write MB/s',
        'compaction peak RSS MiB',
        'raw peak RSS MiB',
      ],
      json.compaction.map((r) => [
        r.backend,
        fmtInt(r.files),
        fmtInt(r.filesAfter),
        fmtNum(r.inputMB),
        fmtNum(r.compactMBps),
        fmtNum(r.rawMBps),
        fmtNum(r.compactPeakRssMiB),
        fmtNum(r.rawPeakRssMiB),
      ]),
    ),
    '',
    '',
  ];
}

await runStandalone(import.meta.url, run, {
  '--snapshots': 'snapshots',
  '--s3-snapshots': 's3Snapshots',
  '--objects': ['objects', 'numbers'],
  '--s3-objects': ['s3Objects', 'numbers'],
  '--only': ['only', 'string'],
});
