/**
 * Key lookups on a primary-key table, as a Node service makes them: one-key reads
 * `newRead({ where: 'id = K' })` on a long-lived `Table` (the first call, then p50/p90 and the
 * storage requests per key), the same for 1,000 keys (`id IN (…)`), set against a full read of
 * the id column in the same process; and `tidemark delete --input` of 5,000 keys on a 200k-row
 * table with `tidemark count --where "id IN (…4,000 keys)"` (run in-process through the CLI).
 *
 * Tables (lib/lookup-tasks.mjs): 500k rows in 8 buckets on local disk, once fully compacted (one
 * file per bucket) and once as a `write-only` writer left it (5 appends of 100k rows, no
 * compaction: 5 overlapping level-0 files per bucket); on
 * the S3 server 10M rows, fully compacted. Built tables are kept (local: benchmarks/work/lookup-cache,
 * S3: bench/lookup-cache/ in the bucket) and reused while their READY marker exists.
 *
 * Before/after in one run: with `LOOKUP_BASELINE=<checkout>` (a checkout of an older commit whose
 * packages are built, node_modules resolving its own @tidemark packages) every measurement also
 * runs on that code, on the same table files, right before this checkout's.
 *
 * Data-file index (Paimon's bloom filter on `id`, `file-index.bloom-filter.columns`), before and
 * after in one run: the "as written" table again with even ids only (so odd ids inside the range are
 * absent keys that min/max statistics cannot rule out), once without and once with the index
 * (items sized to a file's rows, fpp 0.01, so each file's filter is a sidecar); one-key reads of
 * present and of absent keys, locally and on the S3 server (`--file-index-s3-rows`, 500k by default:
 * a 10M-row S3 table takes too long to build on this loaded machine). `--file-index-only` runs just
 * these and writes them as `lookup-file-index` (so a partial run does not replace lookup.json).
 *
 *   node benchmarks/lookup.bench.mjs [--rows 500000] [--s3-rows 10000000] [--lookups 40] [--delete-rows 200000]
 *        [--file-index-only] [--file-index-s3-rows 500000]
 *
 * Imports the BUILT packages.
 */
import { cp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { environment, fmtInt, fmtNum, fmtRate, markdownTable, problemsSection, WORK_DIR } from './lib/report.mjs';
import { medianRun, runChild } from './lib/measure.mjs';
import { parseNumberArgs, runIfMain, s3FromEnv } from './lib/standalone.mjs';

export const name = 'lookup';

const TASKS = new URL('./lib/lookup-tasks.mjs', import.meta.url);
const REPO = fileURLToPath(new URL('..', import.meta.url));
const CACHE = path.join(WORK_DIR, 'lookup-cache');
/** Fresh-process runs of the delete per engine (the median is reported). */
const DELETE_RUNS = 3;

const load = () => os.loadavg().map((x) => Number(x.toFixed(2)));

/**
 * @param {{ log?: (msg: string) => void, s3?: object, rows?: number, s3Rows?: number, lookups?: number, deleteRows?: number, baseline?: string }} [options]
 */
export async function run(options = {}) {
  const log = options.log ?? ((m) => console.error(m));
  const rows = options.rows ?? 500_000;
  const s3Rows = options.s3Rows ?? 10_000_000;
  const lookups = options.lookups ?? 40;
  const deleteRows = options.deleteRows ?? 200_000;
  const baseline = options.baseline ?? process.env.LOOKUP_BASELINE;
  const engines = [...(baseline ? [{ engine: 'before', root: path.resolve(baseline) }] : []), { engine: 'this', root: REPO }];
  const started = performance.now();
  const loadAtStart = load();
  const problems = [];
  const builds = [];
  const cases = [];
  const deletes = [];
  const fileIndexCases = [];

  const build = async (label, args) => {
    log(`building ${label} (${fmtInt(args.rows)} rows) unless cached`);
    const r = await runChild(TASKS, 'build', { engine: REPO, ...args });
    builds.push({ table: label, rows: args.rows, ...r });
    log(`${label}: ${r.reused ? 'reused' : `built in ${fmtNum(r.buildMs / 1000)} s, ${r.files} files`}`);
  };
  const measure = async (table, backend, location, args, s3) => {
    for (const { engine, root } of engines) {
      const before = load();
      // On the S3 server the older code's one-key reads are measured alike; its IN reads and full
      // reads (tens of seconds at 10M rows) once or not at all.
      const slow = engine === 'before' && backend !== 'local';
      const r = await runChild(TASKS, 'lookups', {
        engine: root,
        location,
        s3,
        lookups,
        // A 1,000-key read takes tens of milliseconds locally: the median of 11 holds under load.
        inRuns: slow ? 0 : backend === 'local' ? 11 : 3,
        fullRuns: slow ? 1 : 3,
        ...args,
      });
      cases.push({ table, backend, engine, loadBefore: before, loadAfter: load(), ...r });
      log(
        `${table} [${engine}]: first ${fmtNum(r.firstMs, 0)} ms, p50 ${fmtNum(r.p50Ms, 1)} ms, p90 ${fmtNum(r.p90Ms, 1)} ms, ` +
          `full id read ${fmtNum(r.fullIdReadMs, 0)} ms, ${fmtNum(r.requestsPerKey.data, 1)} data requests/key, IN ${fmtRate(r.inKeysPerSec)} keys/s`,
      );
    }
  };

  const runFileIndex = () =>
    fileIndexRuns({ rows, lookups, s3: options.s3, s3Rows: options.fileIndexS3Rows ?? 500_000, build, log, out: fileIndexCases, problems });

  // The fields every result of this bench starts with (read at the end of the run).
  const header = (resultName) => ({
    name: resultName,
    date: new Date().toISOString(),
    environment: environment(),
    machine: 'shared: 2 cores used by several agents at once; compare the ratios of one run, not absolute times',
    loadAverage: { start: loadAtStart, end: load() },
    rows,
  });

  if (options.fileIndexOnly) {
    await runFileIndex();
    const json = { ...header('lookup-file-index'), builds, fileIndexCases, problems, seconds: (performance.now() - started) / 1000 };
    return { name: json.name, json, markdown: fileIndexMarkdown(json, true) };
  }

  const compacted = path.join(CACHE, `pk-${rows}-b8-full`);
  const written = path.join(CACHE, `pk-${rows}-b8-level0`);
  const delMaster = path.join(CACHE, `pk-${deleteRows}-b8-full`);
  await build('local, compacted', { location: compacted, rows });
  await build('local, as written', { location: written, rows, compact: false, options: { 'write-only': 'true' } });
  await build('delete table', { location: delMaster, rows: deleteRows });
  await measure(`${fmtRate(rows)} rows, 8 buckets, compacted`, 'local', compacted, { rows });
  await measure(`${fmtRate(rows)} rows, 8 buckets, as written`, 'local', written, { rows });

  const runDir = path.join(WORK_DIR, `lookup-${process.pid}`);
  try {
    // Three fresh processes per engine, alternating, each on its own copy: one run of a few
    // seconds says more about the load of that moment than about the code. The median run is shown.
    const runs = new Map(engines.map(({ engine }) => [engine, []]));
    const loads = new Map(engines.map(({ engine }) => [engine, { before: load(), after: load() }]));
    for (let i = 0; i < DELETE_RUNS; i++) {
      for (const { engine, root } of engines) {
        const copy = path.join(runDir, `delete-${engine}-${i}`);
        await cp(delMaster, copy, { recursive: true });
        if (i === 0) loads.get(engine).before = load();
        const r = await runChild(TASKS, 'deleteKeys', { engine: root, location: copy, rows: deleteRows, workDir: runDir });
        loads.get(engine).after = load();
        runs.get(engine).push(r);
        await rm(copy, { recursive: true, force: true });
        log(
          `delete [${engine}] run ${i + 1}: ${r.keys} keys in ${fmtNum(r.deleteMs / 1000, 2)} s (CPU ${fmtNum(r.deleteCpuMs / 1000, 2)} s); count of ${r.countKeys} keys in ${fmtNum(r.countMs / 1000, 2)} s`,
        );
      }
    }
    for (const { engine } of engines) {
      const all = runs.get(engine);
      const r = medianRun(all, 'deleteMs');
      const { before, after } = loads.get(engine);
      deletes.push({ engine, rows: deleteRows, loadBefore: before, loadAfter: after, ...r, deleteRuns: all.map((x) => x.deleteMs) });
    }
  } finally {
    await rm(runDir, { recursive: true, force: true });
  }

  if (options.s3) {
    const location = `s3://${options.s3.bucket}/bench/lookup-cache/pk-${s3Rows}-b8-full`;
    await build('S3, compacted', { location, rows: s3Rows, s3: options.s3, batchRows: 500_000 });
    await measure(`${fmtRate(s3Rows)} rows, 8 buckets, compacted`, 's3 (RGW)', location, { rows: s3Rows }, options.s3);
  } else problems.push('S3 rows skipped: no S3 server configured (S3_ENDPOINT).');
  await runFileIndex();

  const json = {
    ...header(name),
    s3Rows,
    deleteRows,
    baseline: baseline ?? null,
    builds,
    cases,
    deletes,
    fileIndexCases,
    problems,
    seconds: (performance.now() - started) / 1000,
    s3: options.s3 ? { endpoint: options.s3.endpoint } : undefined,
  };
  return { name, json, markdown: markdown(json) };
}

function markdown(json) {
  return [
    '# Key lookups on a primary-key table',
    '',
    `Run ${json.date}; total ${fmtNum(json.seconds)} s. Machine: ${json.machine}. Load average (1/5/15 min) ${json.loadAverage.start.join(' / ')} at the start, ${json.loadAverage.end.join(' / ')} at the end.`,
    json.baseline ? `"before" is the code at ${json.baseline}, measured on the same table files right before "this" code.` : '',
    '',
    markdownTable(
      [
        'table',
        'backend',
        'code',
        'first call',
        'one key p50',
        'p90',
        'CPU per key',
        'full read of id',
        'p50 ÷ full read',
        'data-file requests per key',
        'all requests per key',
        '1,000 keys IN',
        'load (1 min)',
      ],
      json.cases.map((c) => [
        c.table,
        c.backend,
        c.engine,
        `${fmtNum(c.firstMs, 0)} ms`,
        `${fmtNum(c.p50Ms, 1)} ms`,
        `${fmtNum(c.p90Ms, 1)} ms`,
        c.cpuMsPerKey === undefined ? '–' : `${fmtNum(c.cpuMsPerKey, 1)} ms`,
        `${fmtNum(c.fullIdReadMs, 0)} ms`,
        fmtNum(c.p50Ms / c.fullIdReadMs, 3),
        fmtNum(c.requestsPerKey.data, 1),
        fmtNum(c.requestsPerKey.all, 1),
        c.inRuns.length ? `${fmtRate(c.inKeysPerSec)} keys/s (${fmtNum(c.inMs, 0)} ms)` : '–',
        `${c.loadBefore[0]} → ${c.loadAfter[0]}`,
      ]),
    ),
    '',
    markdownTable(
      [
        'code',
        `tidemark delete --input (5,000 keys of ${fmtRate(json.deleteRows)} rows)`,
        'CPU of the delete',
        'tidemark count --where "id IN (…)"',
        'load (1 min)',
      ],
      json.deletes.map((d) => [
        d.engine,
        `${fmtNum(d.deleteMs / 1000, 2)} s`,
        d.deleteCpuMs === undefined ? '–' : `${fmtNum(d.deleteCpuMs / 1000, 2)} s`,
        `${fmtNum(d.countMs / 1000, 2)} s (${fmtInt(d.countKeys)} keys)`,
        `${d.loadBefore[0]} → ${d.loadAfter[0]}`,
      ]),
    ),
    '',
    '- One key: `table.newRead({ where: "id = K" }).toArrowTable()` on one `Table` opened once, random existing keys; the first call is the first read of a fresh process (worker pool start included).',
    '- Full read of id: `newRead({ columns: ["id"] }).toArrowTable()` of the same table in the same process (median of 3), the yardstick of the ratio.',
    '- Requests per key: storage requests of the later calls, counted by a FileIO wrapper; data-file requests are those under `bucket-*/`.',
    '- delete and count run the CLI in-process (`main([...])`): keys read from a JSON-lines file, the table opened, the rows found, the `-D` records written and committed; three fresh processes per code, alternating, each on its own copy of the table: the run of median wall time is shown.',
    '- CPU per key: user + system CPU of the process (main thread and decode workers) over the one-key reads after the first, divided by their number.',
    '- 1,000 keys IN: `newRead({ where: "id IN (…1,000 random existing keys)" })` after the one-key reads and full reads; the median of 11 reads locally, of 3 on S3.',
    ...limits(json),
    ...fileIndexMarkdown(json, false),
    ...problemsSection(json.problems),
  ]
    .filter((l, i, all) => !(l === '' && all[i - 1] === ''))
    .join('\n');
}

/** What stops the rows that miss their target, in this run's figures. */
function limits(json) {
  const s3 = json.cases.find((c) => c.engine === 'this' && c.backend !== 'local');
  const out = [];
  if (s3 && s3.p50Ms > 50) {
    out.push(
      `- S3, one key at ${fmtRate(json.s3Rows)} rows: p50 ${fmtNum(s3.p50Ms, 1)} ms, of which ${s3.cpuMsPerKey === undefined ? '?' : fmtNum(s3.cpuMsPerKey, 1)} ms is CPU ` +
        'on a machine at the load average shown (the rest waits for a core and for the store). Each bucket is one file of 1.25M rows in row groups of up to 1M; a lookup ' +
        `reads the key page and, in the same round, one page per other column (${fmtNum(s3.requestsPerKey.data, 1)} data requests per key), and decodes ` +
        'those pages on the calling thread (each column chunk’s dictionary is decoded once per opened file and kept). Below: the two round trips ' +
        '(snapshot check, then data) and the zstd decompression of one ~20k-row page per column (a bloom-filter file index on the key does not help here: ' +
        'a compacted bucket’s one file holds every key; it rules out the other files of buckets with several, see the data-file index section).',
    );
  }
  const local = json.cases.find((c) => c.engine === 'this' && c.backend === 'local' && /compacted/.test(c.table));
  if (local && local.inRuns?.length && local.inKeysPerSec < 20_000) {
    out.push(
      `- 1,000 keys: ${fmtNum(local.inMs, 0)} ms with every bucket's rows already decoded and kept, so CPU on the calling thread: ` +
        'parsing the IN list, hashing its keys to buckets, planning (manifest decode, statistics of each file against the list), the binary search of the keys ' +
        'in the kept rows of all 8 buckets, the merge and the Arrow result (no data-file request).',
    );
  }
  const del = json.deletes.find((d) => d.engine === 'this');
  if (del && del.deleteMs > 2000) {
    out.push(
      `- delete --input: ${fmtNum(del.deleteMs / 1000, 2)} s wall, ${del.deleteCpuMs === undefined ? '?' : fmtNum(del.deleteCpuMs / 1000, 2)} s of it CPU ` +
        '(main thread and workers) in a fresh process: starting the decode workers and the Parquet encoder, code run for the first time, the input parsed, ' +
        'every bucket decoded whole (one key in 40 rows: every page holds keys), the -D records encoded and committed; the rest of the wall time waits for a core.',
    );
  }
  return out.length === 0 ? [] : ['', '## Limits', '', ...out];
}

/**
 * The data-file index cases (see the module comment): the even-id "as written" table without and
 * with a bloom filter on `id`, present and absent keys, locally and on S3.
 */
async function fileIndexRuns({ rows, lookups, s3, s3Rows, build, log, out, problems }) {
  const batchRows = 100_000;
  const perFile = Math.ceil(batchRows / 8);
  const bloom = {
    'file-index.bloom-filter.columns': 'id',
    'file-index.bloom-filter.id.items': String(Math.ceil(perFile * 1.2)),
    'file-index.bloom-filter.id.fpp': '0.01',
  };
  // Each without and with the index; with the default row cache (256 MiB: this table's decoded rows
  // all stay, as in a service whose table fits) and with 1 MiB (a table larger than the row cache:
  // each lookup decodes the row groups it needs again; footers and sidecars stay, they are metadata).
  const small = { 'lookup.cache-max-memory-size': '1 mb' };
  const variants = [
    { index: 'none', rowCache: 'default', suffix: '', options: { 'write-only': 'true' } },
    { index: 'bloom filter on id', rowCache: 'default', suffix: '-bloom', options: { 'write-only': 'true', ...bloom } },
    { index: 'none', rowCache: '1 MiB', suffix: '-rc1m', options: { 'write-only': 'true', ...small } },
    { index: 'bloom filter on id', rowCache: '1 MiB', suffix: '-bloom-rc1m', options: { 'write-only': 'true', ...bloom, ...small } },
  ];
  const targets = [{ backend: 'local', rows, location: (v) => path.join(CACHE, `pk-${rows}-b8-level0-even${variants[v].suffix}`) }];
  if (s3)
    targets.push({
      backend: 's3 (RGW)',
      rows: s3Rows,
      location: (v) => `s3://${s3.bucket}/bench/lookup-cache/pk-${s3Rows}-b8-level0-even${variants[v].suffix}`,
    });
  else problems.push('file-index S3 rows skipped: no S3 server configured (S3_ENDPOINT).');
  for (const target of targets) {
    for (const [v, variant] of variants.entries()) {
      const location = target.location(v);
      await build(`${target.backend}, as written, even ids, index ${variant.index}, row cache ${variant.rowCache}`, {
        location,
        rows: target.rows,
        compact: false,
        idStride: 2,
        batchRows,
        options: variant.options,
        ...(target.backend === 'local' ? {} : { s3 }),
      });
      const before = load();
      const r = await runChild(TASKS, 'lookups', {
        engine: REPO,
        location,
        rows: target.rows,
        idStride: 2,
        lookups,
        absentLookups: lookups,
        inRuns: 1,
        fullRuns: 1,
        ...(target.backend === 'local' ? {} : { s3 }),
      });
      out.push({
        backend: target.backend,
        rows: target.rows,
        index: variant.index,
        rowCache: variant.rowCache,
        loadBefore: before,
        loadAfter: load(),
        ...r,
      });
      log(
        `file index ${variant.index}, row cache ${variant.rowCache} [${target.backend}]: present p50 ${fmtNum(r.p50Ms, 1)} ms, ${fmtNum(r.requestsPerKey.data, 2)} data requests/key; ` +
          `absent p50 ${fmtNum(r.absent.p50Ms, 1)} ms, ${fmtNum(r.absent.requestsPerKey.data, 2)} data requests/key`,
      );
    }
  }
}

/** The file-index table (a section of lookup.md, or the whole of lookup-file-index.md). */
export function fileIndexMarkdown(json, whole) {
  if (!json.fileIndexCases?.length) return [];
  const table = markdownTable(
    [
      'backend',
      'rows',
      'row cache',
      'index',
      'present key p50',
      'p90',
      'data-file requests per key',
      'files skipped per key',
      'absent key p50',
      'absent: data-file requests per key',
      'absent: files skipped per key',
      'sidecar reads (first call + all lookups)',
      'load (1 min)',
    ],
    json.fileIndexCases.map((c) => [
      c.backend,
      fmtRate(c.rows),
      c.rowCache ?? 'default',
      c.index,
      `${fmtNum(c.p50Ms, 1)} ms`,
      `${fmtNum(c.p90Ms, 1)} ms`,
      fmtNum(c.requestsPerKey.data, 2),
      fmtNum(c.fileIndexPerKey?.filesSkipped ?? 0, 2),
      `${fmtNum(c.absent.p50Ms, 1)} ms`,
      fmtNum(c.absent.requestsPerKey.data, 2),
      fmtNum(c.absent.filesSkippedPerKey, 2),
      fmtInt(c.firstRequests.fileIndex + (c.requestsPerKey.fileIndex + c.absent.requestsPerKey.fileIndex) * c.lookups),
      `${c.loadBefore[0]} → ${c.loadAfter[0]}`,
    ]),
  );
  const notes = [
    '- Tables: 5 appends of 100k rows each written by a `write-only` writer (5 overlapping level-0 files per bucket, 8 buckets), ids even only; one without index, one with `file-index.bloom-filter.columns = id` (items 15,000 per file, fpp 0.01: an 18 KB `.index` sidecar per file).',
    '- Row cache: `lookup.cache-max-memory-size`. With the default (256 MiB) every decoded row group of this table stays after its first lookup, so later lookups of its bucket read no data; with 1 MiB the table is larger than the row cache (as a large table is) and each lookup decodes again the row groups it needs (footers, page indexes and sidecars stay cached: they are metadata).',
    '- With the default row cache and no index, the first lookup of a bucket decodes and keeps all five of its files, so the later lookups of that bucket read nothing; with the index a lookup decodes only the file holding its key, so within 40 lookups more of them are first touches of a file: fewer data requests per key, but a higher p50 until the cache is warm.',
    '- Present key: a random even id; absent key: the odd id after it (inside every file’s min/max, so only the index can rule a file out). One long-lived `Table`; requests counted after the first call. Data-file requests exclude the sidecars, which are read once per file and then kept in the table’s read cache.',
  ];
  if (whole) {
    return [
      '# Key lookups with a data-file index (bloom filter)',
      '',
      `Run ${json.date}; total ${fmtNum(json.seconds)} s. Machine: ${json.machine}. Load average (1/5/15 min) ${json.loadAverage.start.join(' / ')} at the start, ${json.loadAverage.end.join(' / ')} at the end.`,
      '',
      table,
      '',
      ...notes,
      ...problemsSection(json.problems),
    ].join('\n');
  }
  return ['', '## Data-file index (bloom filter on the key)', '', table, '', ...notes];
}

const ARGS = {
  '--rows': 'rows',
  '--s3-rows': 's3Rows',
  '--lookups': 'lookups',
  '--delete-rows': 'deleteRows',
  '--file-index-only': ['fileIndexOnly', 'flag'],
  '--file-index-s3-rows': 'fileIndexS3Rows',
};

await runIfMain(import.meta.url, () => run({ ...parseNumberArgs(process.argv.slice(2), ARGS), s3: s3FromEnv() }));
