/**
 * Synthetic Paimon append table for the read benchmarks, written only with the @tidemark/format
 * codecs (schema JSON, Parquet data files, Avro manifests and manifest lists, snapshot JSON).
 *
 * Layout: partitioned by `p` (INT, `partitions` values), bucket-unaware (`bucket = -1`, every file
 * in `bucket-0`), `liveFiles` live data files of `rowsPerFile` rows each. Planning has to fold real
 * history: the files arrive over several APPEND snapshots and a final COMPACT snapshot deletes ~5 %
 * of the first commit's files and adds replacements, so the latest snapshot's base list holds the
 * manifests of all earlier commits and its delta list holds ADD and DELETE entries. Manifests roll
 * at `manifestTargetBytes` (Paimon's `manifest.target-file-size`, 8 MiB).
 *
 * Disk use stays small: each partition has a few distinct Parquet "templates", and every data file
 * is a hard link to one of them (the manifest stats match the template's contents).
 *
 * With `dataFiles: false` only the metadata is written (schema, manifests, manifest lists,
 * snapshots): enough for scan planning of a million live files without creating a million data
 * files. Entries are then generated one manifest at a time, so the generator's memory stays flat.
 *
 * The table is cached: `ensureSyntheticTable` regenerates only when `meta.json` is missing or was
 * written with other parameters.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, link, readFile, rm, writeFile, copyFile } from 'node:fs/promises';
import path from 'node:path';

import * as arrow from 'apache-arrow';
import {
  newDataFileMeta,
  deserializeBinaryRow,
  partitionPath,
  serializeBinaryRow,
  serializeSchema,
  serializeSnapshot,
  toArrowSchema,
  utf8Vector,
  writeManifestFile,
  writeManifestList,
  writeParquetFile,
} from '@tidemark/format';

/** Bump when the generated layout changes, so cached tables are rebuilt. */
const GENERATOR_VERSION = 2;

const INT = { root: 'INT', nullable: true };
const BIGINT = { root: 'BIGINT', nullable: true };
const STRING = { root: 'VARCHAR', nullable: true, length: 2147483647 };
const DOUBLE = { root: 'DOUBLE', nullable: true };
const TIMESTAMP3 = { root: 'TIMESTAMP', nullable: true, precision: 3 };

/** The table's columns (schema 0). */
export const FIELDS = [
  { id: 0, name: 'p', type: INT },
  { id: 1, name: 'id', type: BIGINT },
  { id: 2, name: 'name', type: STRING },
  { id: 3, name: 'amount', type: DOUBLE },
  { id: 4, name: 'ts', type: TIMESTAMP3 },
];
const TYPES = FIELDS.map((f) => f.type);
const BASE_TIME = Date.UTC(2024, 0, 1);

/**
 * @typedef {object} SyntheticTableSpec
 * @property {number} liveFiles      live data files in the latest snapshot
 * @property {number} rowsPerFile
 * @property {number} [partitions]   default 10
 * @property {number} [templatesPerPartition] distinct Parquet files per partition, default 4
 * @property {number} [appendCommits] APPEND snapshots before the COMPACT one, default 8
 * @property {number} [deleteFraction] share of live files deleted by the COMPACT snapshot, default 0.05
 * @property {number} [manifestTargetBytes] default 8 MiB
 * @property {boolean} [dataFiles] write the data files (hard links); default true. Without them the
 *   table can only be planned, not read.
 */

/**
 * @typedef {object} SyntheticTableMeta
 * @property {string} root                table directory
 * @property {object} spec
 * @property {number} snapshots
 * @property {number} liveFiles
 * @property {number} liveRows
 * @property {number} manifestEntries     entries in all manifests the latest snapshot references
 * @property {number} manifests
 * @property {number} manifestBytes
 * @property {string | null} liveFilesList path of a text file with one live data file path per line
 *   (null without data files)
 * @property {number} generateMs
 */

function normalise(spec) {
  return {
    liveFiles: spec.liveFiles,
    rowsPerFile: spec.rowsPerFile,
    partitions: spec.partitions ?? 10,
    templatesPerPartition: spec.templatesPerPartition ?? 4,
    appendCommits: spec.appendCommits ?? 8,
    deleteFraction: spec.deleteFraction ?? 0.05,
    manifestTargetBytes: spec.manifestTargetBytes ?? 8 * 1024 * 1024,
    dataFiles: spec.dataFiles ?? true,
    generatorVersion: GENERATOR_VERSION,
  };
}

/**
 * Returns the table at `root`, generating it first unless a table with the same spec is cached
 * there.
 *
 * @param {string} root
 * @param {SyntheticTableSpec} spec
 * @param {(msg: string) => void} [log]
 * @returns {Promise<SyntheticTableMeta>}
 */
export async function ensureSyntheticTable(root, spec, log = () => {}) {
  const full = normalise(spec);
  const metaPath = path.join(root, 'meta.json');
  if (existsSync(metaPath)) {
    const meta = JSON.parse(await readFile(metaPath, 'utf8'));
    if (JSON.stringify(meta.spec) === JSON.stringify(full)) return meta;
    log(`cached table at ${root} has another spec; regenerating`);
  }
  await rm(root, { recursive: true, force: true });
  const t0 = performance.now();
  const meta = await generate(root, full, log);
  meta.generateMs = Math.round(performance.now() - t0);
  await writeFile(metaPath, JSON.stringify(meta, null, 2));
  return meta;
}

/** Columns of one template file: deterministic values, distinct per (partition, template). */
function templateColumns(p, t, rows) {
  const ids = new BigInt64Array(rows);
  const names = new Array(rows);
  const amounts = new Float64Array(rows);
  const ts = new BigInt64Array(rows);
  const base = (p * 1000 + t) * rows;
  for (let i = 0; i < rows; i++) {
    const id = base + i;
    ids[i] = BigInt(id);
    names[i] = `name-${String(id % 100000).padStart(5, '0')}`;
    amounts[i] = Math.round(((id * 7919) % 100000) * 1.5) / 100;
    ts[i] = BigInt(BASE_TIME + id * 1000);
  }
  return { ids, names, amounts, ts };
}

function buildTemplate(p, t, rows) {
  const schema = toArrowSchema(FIELDS);
  const c = templateColumns(p, t, rows);
  const fieldType = (i) => schema.fields[i].type;
  const data = [
    arrow.makeData({ type: fieldType(0), length: rows, data: new Int32Array(rows).fill(p) }),
    arrow.makeData({ type: fieldType(1), length: rows, data: c.ids }),
    utf8Vector(c.names).data[0],
    arrow.makeData({ type: fieldType(3), length: rows, data: c.amounts }),
    arrow.makeData({ type: fieldType(4), length: rows, data: c.ts }),
  ];
  const struct = arrow.makeData({ type: new arrow.Struct(schema.fields), length: rows, children: data });
  const table = new arrow.Table(schema, [new arrow.RecordBatch(schema, struct)]);
  return { table, columns: c };
}

/** Value stats of a template in manifest form (min row, max row, null counts). */
function templateStats(p, columns) {
  let minId = columns.ids[0];
  let maxId = columns.ids[0];
  let minName = columns.names[0];
  let maxName = columns.names[0];
  let minAmount = columns.amounts[0];
  let maxAmount = columns.amounts[0];
  let minTs = columns.ts[0];
  let maxTs = columns.ts[0];
  for (let i = 1; i < columns.ids.length; i++) {
    if (columns.ids[i] < minId) minId = columns.ids[i];
    if (columns.ids[i] > maxId) maxId = columns.ids[i];
    if (columns.names[i] < minName) minName = columns.names[i];
    if (columns.names[i] > maxName) maxName = columns.names[i];
    if (columns.amounts[i] < minAmount) minAmount = columns.amounts[i];
    if (columns.amounts[i] > maxAmount) maxAmount = columns.amounts[i];
    if (columns.ts[i] < minTs) minTs = columns.ts[i];
    if (columns.ts[i] > maxTs) maxTs = columns.ts[i];
  }
  const ts = (v) => ({ millis: Number(v), nanoOfMillis: 0 });
  return {
    minValues: serializeBinaryRow(TYPES, [p, minId, minName, minAmount, ts(minTs)]),
    maxValues: serializeBinaryRow(TYPES, [p, maxId, maxName, maxAmount, ts(maxTs)]),
    nullCounts: [0, 0, 0, 0, 0],
  };
}

/** How many files each commit adds/deletes. */
function commitPlan(spec) {
  const nDel = Math.max(1, Math.round(spec.liveFiles * spec.deleteFraction));
  const compactAdds = Math.max(1, Math.ceil(nDel / 5));
  const appendLive = spec.liveFiles - compactAdds;
  const first = Math.round(appendLive * 0.6);
  const rest = appendLive - first;
  const adds = [first + nDel];
  for (let c = 1; c < spec.appendCommits; c++) {
    const share = Math.floor(rest / (spec.appendCommits - 1));
    adds.push(c === spec.appendCommits - 1 ? rest - share * (spec.appendCommits - 2) : share);
  }
  return { appendAdds: adds, nDel, compactAdds };
}

async function generate(root, spec, log) {
  const paths = {
    schema: path.join(root, 'schema'),
    snapshot: path.join(root, 'snapshot'),
    manifest: path.join(root, 'manifest'),
    templates: path.join(root, '_bench_templates'),
  };
  for (const dir of Object.values(paths)) await mkdir(dir, { recursive: true });

  const now = Date.now();
  const schema = {
    version: 3,
    id: 0,
    fields: FIELDS,
    highestFieldId: FIELDS.length - 1,
    partitionKeys: ['p'],
    primaryKeys: [],
    options: { bucket: '-1', 'file.format': 'parquet', 'manifest.target-file-size': '8 mb' },
    timeMillis: now,
  };
  await writeFile(path.join(paths.schema, 'schema-0'), serializeSchema(schema));

  // Templates: a few distinct Parquet files per partition.
  const templates = [];
  for (let p = 0; p < spec.partitions; p++) {
    const partDir = partitionPath(['p'], [INT], [p]);
    if (spec.dataFiles) await mkdir(path.join(root, partDir, 'bucket-0'), { recursive: true });
    for (let t = 0; t < spec.templatesPerPartition; t++) {
      const { table, columns } = buildTemplate(p, t, spec.rowsPerFile);
      const bytes = writeParquetFile(table, { compression: 'zstd' });
      const file = path.join(paths.templates, `p${p}-t${t}.parquet`);
      if (spec.dataFiles) await writeFile(file, bytes);
      templates.push({
        p,
        partDir,
        file,
        size: bytes.length,
        partition: serializeBinaryRow([INT], [p]),
        stats: templateStats(p, columns),
      });
    }
  }

  const plan = commitPlan(spec);
  const seqByBucket = new Map(); // all files are in bucket-0 of their partition
  let fileCounter = 0;
  const live = new Map(); // file name -> relPath (with data files only)
  let liveCount = 0;
  const creationTime = now;

  /** Creates the data file (hard link) and returns its ADD entry. */
  async function addFile() {
    const i = fileCounter++;
    const tpl = templates[i % templates.length];
    const seq = seqByBucket.get(tpl.p) ?? 0n;
    seqByBucket.set(tpl.p, seq + BigInt(spec.rowsPerFile));
    const fileName = `data-${randomUUID()}-0.parquet`;
    const relPath = `${tpl.partDir}bucket-0/${fileName}`;
    if (spec.dataFiles) pendingLinks.push([tpl.file, path.join(root, relPath)]);
    const entry = {
      kind: 'ADD',
      partition: tpl.partition,
      bucket: 0,
      totalBuckets: -1,
      file: newDataFileMeta({
        fileName,
        fileSize: tpl.size,
        rowCount: spec.rowsPerFile,
        valueStats: tpl.stats,
        minSequenceNumber: seq,
        maxSequenceNumber: seq + BigInt(spec.rowsPerFile - 1),
        schemaId: 0,
        creationTime,
        deleteRowCount: 0,
        fileSource: 0,
      }),
    };
    if (spec.dataFiles) live.set(fileName, relPath);
    liveCount++;
    return entry;
  }
  let pendingLinks = [];
  async function flushLinks() {
    const batch = pendingLinks;
    pendingLinks = [];
    const CONCURRENCY = 64;
    for (let i = 0; i < batch.length; i += CONCURRENCY) {
      await Promise.all(batch.slice(i, i + CONCURRENCY).map(([from, to]) => link(from, to).catch(() => copyFile(from, to))));
    }
  }

  let bytesPerEntry = null;
  let manifestCounter = 0;
  const manifestUuid = randomUUID();
  let totalManifestBytes = 0;

  /**
   * Writes `count` entries made by `make(i)` as manifests rolled at the target size, generating
   * one manifest's entries at a time; returns their ManifestFileMeta.
   */
  async function writeManifests(count, make) {
    const first = [];
    if (bytesPerEntry === null) {
      for (let i = 0; i < Math.min(count, 2000); i++) first.push(await make(i));
      bytesPerEntry = (await writeManifestFile(first)).length / first.length;
    }
    const perManifest = Math.max(1, Math.floor(spec.manifestTargetBytes / bytesPerEntry));
    const metas = [];
    for (let i = 0; i < count; i += perManifest) {
      const chunk = [];
      for (let j = i; j < Math.min(count, i + perManifest); j++) chunk.push(j < first.length ? first[j] : await make(j));
      const bytes = await writeManifestFile(chunk);
      const fileName = `manifest-${manifestUuid}-${manifestCounter++}`;
      await writeFile(path.join(paths.manifest, fileName), bytes);
      totalManifestBytes += bytes.length;
      let minP = Infinity;
      let maxP = -Infinity;
      let added = 0;
      for (const e of chunk) {
        const p = /** @type {number} */ (deserializeBinaryRow(e.partition, [INT])[0]);
        if (p < minP) minP = p;
        if (p > maxP) maxP = p;
        if (e.kind === 'ADD') added++;
      }
      metas.push({
        fileName,
        fileSize: bytes.length,
        numAddedFiles: added,
        numDeletedFiles: chunk.length - added,
        partitionStats: {
          minValues: serializeBinaryRow([INT], [minP]),
          maxValues: serializeBinaryRow([INT], [maxP]),
          nullCounts: [0],
        },
        schemaId: 0,
        minBucket: 0,
        maxBucket: 0,
        minLevel: 0,
        maxLevel: 0,
        minRowId: null,
        maxRowId: null,
      });
    }
    return metas;
  }

  let listCounter = 0;
  async function writeList(metas) {
    const bytes = await writeManifestList(metas);
    const fileName = `manifest-list-${manifestUuid}-${listCounter++}`;
    await writeFile(path.join(paths.manifest, fileName), bytes);
    return { fileName, size: bytes.length };
  }

  let allMetas = []; // base + delta manifests of the latest snapshot
  let totalRecords = 0;
  let snapshotId = 0;
  async function commit(count, make, kind) {
    snapshotId++;
    const base = await writeList(allMetas);
    let deltaRecords = 0;
    const deltaMetas = await writeManifests(count, async (i) => {
      const e = await make(i);
      deltaRecords += e.kind === 'ADD' ? e.file.rowCount : -e.file.rowCount;
      return e;
    });
    const delta = await writeList(deltaMetas);
    totalRecords += deltaRecords;
    allMetas = [...allMetas, ...deltaMetas];
    const snapshot = {
      version: 3,
      id: snapshotId,
      schemaId: 0,
      baseManifestList: base.fileName,
      baseManifestListSize: base.size,
      deltaManifestList: delta.fileName,
      deltaManifestListSize: delta.size,
      commitUser: 'tidemark-bench',
      commitIdentifier: BigInt(snapshotId),
      commitKind: kind,
      timeMillis: now + snapshotId * 1000,
      totalRecordCount: totalRecords,
      deltaRecordCount: deltaRecords,
      nextRowId: 0,
    };
    await writeFile(path.join(paths.snapshot, `snapshot-${snapshotId}`), serializeSnapshot(snapshot));
    await flushLinks();
    log(`  snapshot ${snapshotId} (${kind}): ${count} entries, ${deltaMetas.length} manifest(s)`);
  }

  const deletable = [];
  for (let c = 0; c < plan.appendAdds.length; c++) {
    const stride = Math.floor(plan.appendAdds[c] / plan.nDel);
    await commit(
      plan.appendAdds[c],
      async (i) => {
        const e = await addFile();
        if (c === 0 && i % stride === 0 && deletable.length < plan.nDel) deletable.push(e);
        return e;
      },
      'APPEND',
    );
  }
  // COMPACT: delete nDel files of the first commit, add compactAdds files.
  await commit(
    deletable.length + plan.compactAdds,
    async (i) => {
      if (i < deletable.length) {
        const e = deletable[i];
        live.delete(e.file.fileName);
        liveCount--;
        return { ...e, kind: 'DELETE' };
      }
      const e = await addFile();
      return { ...e, file: { ...e.file, fileSource: 1 } };
    },
    'COMPACT',
  );
  await writeFile(path.join(paths.snapshot, 'LATEST'), String(snapshotId));
  await writeFile(path.join(paths.snapshot, 'EARLIEST'), '1');

  let liveList = null;
  if (spec.dataFiles) {
    liveList = path.join(root, '_bench_live_files.txt');
    await writeFile(liveList, [...live.values()].map((relPath) => path.join(root, relPath)).join('\n'));
  }
  const manifestEntries = allMetas.reduce((s, m) => s + m.numAddedFiles + m.numDeletedFiles, 0);
  return {
    root,
    spec,
    snapshots: snapshotId,
    liveFiles: liveCount,
    liveRows: liveCount * spec.rowsPerFile,
    manifestEntries,
    manifests: allMetas.length,
    manifestBytes: totalManifestBytes,
    liveFilesList: liveList,
    templateBytes: templates.reduce((s, t) => s + t.size, 0),
    avgDataFileBytes: Math.round(templates.reduce((s, t) => s + t.size, 0) / templates.length),
  };
}

/** Reads the live data file paths recorded by the generator. */
export async function liveFilePaths(meta, limit = Infinity) {
  const all = (await readFile(meta.liveFilesList, 'utf8')).split('\n').filter(Boolean);
  return all.length > limit ? all.slice(0, limit) : all;
}
