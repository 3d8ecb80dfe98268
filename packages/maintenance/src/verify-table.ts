/**
 * `verify`: an fsck for operators. Reads everything a snapshot references and reports what is
 * wrong; never writes or deletes anything.
 *
 * Per checked snapshot: its manifest lists decode, every manifest has its recorded size and
 * decodes, every live data file exists with its recorded size, decodes, holds its recorded row
 * count, and its values lie within the manifest's value statistics (null counts equal, min/max
 * bounds hold; append files only). Across the table: snapshot ids are contiguous from the earliest
 * to the latest, each snapshot file decodes, and the EARLIEST/LATEST hints do not point outside
 * that range. Deletion-vector index files exist with their recorded size, decode, and name live
 * data files of their bucket. Files shared by several snapshots are checked once.
 *
 * Changelogs: the changelog manifest list of each checked snapshot, and with `all` every
 * long-lived changelog (`changelog/changelog-<id>`, contiguous ids, below the earliest snapshot)
 * are checked like the data: manifests decode with their recorded sizes, every changelog file
 * exists with its recorded size and row count.
 */
import {
  INDEX_TYPE_DELETION_VECTORS,
  conformToPaimonTypes,
  decodeDeletionVectorFile,
  deserializeBinaryRow,
  readIndexManifest,
  type IndexManifestEntry,
  readManifestEntries,
  readManifestList,
  readOrcFile,
  readParquetFile,
  type DataField,
  type ManifestEntry,
  type Snapshot,
  type Value,
} from '@tidemark/format';
import {
  ChangelogManager,
  checkAborted,
  compareValues,
  dataFileFormat,
  DataFileLocator,
  FileStatsCollector,
  tableOptions,
  type Table,
} from '@tidemark/core';

export interface VerifyOptions {
  /** Check only this snapshot (default: the latest). */
  readonly snapshotId?: number;
  /** Check every retained snapshot. */
  readonly all?: boolean;
  /** Skip decoding data files (existence and size only). */
  readonly metadataOnly?: boolean;
  readonly signal?: AbortSignal;
  /** Called after each data file is checked. */
  readonly onProgress?: (done: number, total: number) => void;
}

/** One thing found wrong. */
export interface VerifyProblem {
  /** File (or hint) concerned. */
  readonly path: string;
  /** Snapshot through which it was reached, when any. */
  readonly snapshotId: number | null;
  readonly problem: string;
}

export interface VerifySummary {
  readonly table: string;
  readonly ok: boolean;
  readonly snapshotsChecked: number[];
  /** Long-lived changelogs checked (`all` only). */
  readonly changelogsChecked: number[];
  readonly manifestsChecked: number;
  readonly dataFilesChecked: number;
  readonly rowsChecked: number;
  readonly problems: readonly VerifyProblem[];
}

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** Checks `table` read-only and lists every problem found. */
export async function verifyTable(table: Table, options: VerifyOptions = {}): Promise<VerifySummary> {
  const io = table.fileIO;
  const paths = table.paths;
  const problems: VerifyProblem[] = [];
  const report = (path: string, snapshotId: number | null, problem: string): void => void problems.push({ path, snapshotId, problem });

  // Snapshot chain and hints.
  const ids = await table.snapshotManager.sortedIds();
  for (let i = 1; i < ids.length; i++) {
    if (ids[i] !== ids[i - 1]! + 1)
      report(paths.snapshotPath(ids[i - 1]! + 1), null, `snapshot ids jump from ${ids[i - 1]} to ${ids[i]} (missing snapshots)`);
  }
  const hint = async (path: string, name: string): Promise<void> => {
    let text: string;
    try {
      text = new TextDecoder().decode(await io.read(path)).trim();
    } catch {
      return; // hints are optional
    }
    const n = Number(text);
    if (!/^\d+$/.test(text)) report(path, null, `${name} hint is not a snapshot id: '${text.slice(0, 40)}'`);
    else if (ids.length > 0 && (n < ids[0]! || n > ids[ids.length - 1]!))
      report(path, null, `${name} hint says ${n}, but the snapshots are ${ids[0]}..${ids[ids.length - 1]}`);
    else if (ids.length === 0) report(path, null, `${name} hint says ${n}, but the table has no snapshots`);
  };
  await hint(paths.earliestHint, 'EARLIEST');
  await hint(paths.latestHint, 'LATEST');

  let targets: number[];
  if (options.all) targets = ids;
  else if (options.snapshotId !== undefined) targets = [options.snapshotId];
  else targets = ids.length > 0 ? [ids[ids.length - 1]!] : [];

  const snapshots: Snapshot[] = [];
  const byId = new Set(ids);
  for (const id of options.all ? ids : targets) {
    if (!byId.has(id)) {
      report(
        paths.snapshotPath(id),
        id,
        ids.length === 0 ? 'the table has no snapshots' : `snapshot ${id} does not exist (snapshots are ${ids[0]}..${ids[ids.length - 1]})`,
      );
      continue;
    }
    try {
      const s = await table.snapshotManager.snapshot(id);
      if (targets.includes(id)) snapshots.push(s);
    } catch (e) {
      report(paths.snapshotPath(id), id, `cannot be read: ${message(e)}`);
    }
  }

  // Deletion-vector index files: they exist with their recorded size, every vector decodes (CRC,
  // ranges, cardinality) and belongs to a live data file of its bucket, within its row count.
  const checkedIndexFiles = new Set<string>();
  const checkDeletionVectors = async (snap: Snapshot, live: ReadonlyMap<string, ManifestEntry>): Promise<void> => {
    if (!snap.indexManifest) return;
    const indexPath = paths.manifestPath(snap.indexManifest);
    let index: IndexManifestEntry[];
    try {
      index = await readIndexManifest(io, indexPath);
    } catch (e) {
      report(indexPath, snap.id, `index manifest cannot be read: ${message(e)}`);
      return;
    }
    for (const e of index) {
      if (e.indexType !== INDEX_TYPE_DELETION_VECTORS || e.kind !== 'ADD') continue;
      const path = paths.indexFilePath(e.fileName, e.externalPath);
      if (checkedIndexFiles.has(path)) continue;
      checkedIndexFiles.add(path);
      try {
        const size = (await io.stat(path)).size;
        if (size !== e.fileSize) throw new Error(`the file is ${size} bytes, but the index manifest records ${e.fileSize}`);
        const vectors = decodeDeletionVectorFile(await io.read(path), e.dvRanges ?? [], path);
        const part = Buffer.from(e.partition).toString('hex');
        for (const [name, dv] of vectors) {
          const data = live.get(`${e.bucket}|${part}|${name}`);
          if (data === undefined) {
            report(path, snap.id, `holds a deletion vector of '${name}', which is not a live data file of bucket ${e.bucket}`);
            continue;
          }
          let last = -1;
          for (const p of dv.positions()) last = p;
          if (last >= data.file.rowCount) {
            report(path, snap.id, `the deletion vector of '${name}' deletes row ${last}, but the file has ${data.file.rowCount} rows`);
          }
        }
      } catch (err) {
        const m = message(err);
        report(path, snap.id, `deletion vector index file: ${m.startsWith(path) ? m.slice(path.length + 2) : m}`);
      }
    }
  };

  // Long-lived changelogs (with `all`): ids contiguous, below the earliest snapshot, decodable.
  const changelogs: Snapshot[] = [];
  if (options.all) {
    const manager = new ChangelogManager(io, paths);
    const clIds: number[] = [];
    // Files below EARLIEST are leftovers of an interrupted changelog expiration, not part of the chain.
    const clEarliest = await manager.earliestId();
    for await (const id of manager.listIds()) if (clEarliest === null || id >= clEarliest) clIds.push(id);
    clIds.sort((a, b) => a - b);
    for (let i = 0; i < clIds.length; i++) {
      const id = clIds[i]!;
      if (i > 0 && id !== clIds[i - 1]! + 1) {
        report(paths.changelogMetaPath(clIds[i - 1]! + 1), null, `changelog ids jump from ${clIds[i - 1]} to ${id} (missing changelogs)`);
      }
      // Expiration writes changelog-N just before it deletes snapshot-N: only a snapshot still there counts.
      if (byId.has(id) && (await io.exists(paths.snapshotPath(id)))) {
        report(paths.changelogMetaPath(id), id, `changelog ${id} is not older than the earliest snapshot ${ids[0]}`);
      }
      try {
        const c = await manager.tryGet(id);
        if (c !== null) changelogs.push(c);
      } catch (e) {
        report(paths.changelogMetaPath(id), id, `cannot be read: ${message(e)}`);
      }
    }
  }

  const checkedManifests = new Set<string>();
  const checkedFiles = new Map<string, string | null>(); // path -> problem or null
  let manifestsChecked = 0;
  let rowsChecked = 0;
  const work: Array<{ entry: ManifestEntry; path: string; snapshotId: number }> = [];
  const locatorOf = async (): Promise<DataFileLocator> => new DataFileLocator(paths, await table.schemaManager.latest());
  /** The changelog files of a snapshot or long-lived changelog join the files to check. */
  const addChangelog = async (snap: Snapshot): Promise<void> => {
    if (!snap.changelogManifestList) return;
    const listPath = paths.manifestPath(snap.changelogManifestList);
    let metas;
    try {
      metas = await readManifestList(io, listPath);
    } catch (e) {
      report(listPath, snap.id, `changelog manifest list cannot be read: ${message(e)}`);
      return;
    }
    const locator = await locatorOf();
    for (const m of metas) {
      const path = paths.manifestPath(m.fileName);
      try {
        const size = (await io.stat(path)).size;
        if (size !== m.fileSize) throw new Error(`the file is ${size} bytes, but the manifest list records ${m.fileSize}`);
        for await (const e of readManifestEntries(io, path)) {
          if (e.kind === 'ADD') work.push({ entry: e, path: locator.dataFile(e), snapshotId: snap.id });
        }
        if (!checkedManifests.has(path)) manifestsChecked++;
        checkedManifests.add(path);
      } catch (e) {
        report(path, snap.id, `changelog manifest cannot be read: ${message(e)}`);
      }
    }
  };
  for (const c of changelogs) {
    checkAborted(options.signal);
    await addChangelog(c);
  }
  for (const snap of snapshots) {
    await addChangelog(snap);
    checkAborted(options.signal);
    const metas = [];
    for (const list of [snap.baseManifestList, snap.deltaManifestList]) {
      const path = paths.manifestPath(list);
      try {
        metas.push(...(await readManifestList(io, path)));
      } catch (e) {
        report(path, snap.id, `manifest list cannot be read: ${message(e)}`);
      }
    }
    const live = new Map<string, ManifestEntry>();
    for (const m of metas) {
      const path = paths.manifestPath(m.fileName);
      const entries: ManifestEntry[] = [];
      try {
        if (!checkedManifests.has(path)) {
          const size = (await io.stat(path)).size;
          if (size !== m.fileSize) throw new Error(`the file is ${size} bytes, but the manifest list records ${m.fileSize}`);
        }
        for await (const e of readManifestEntries(io, path)) entries.push(e);
        if (!checkedManifests.has(path)) manifestsChecked++;
        checkedManifests.add(path);
      } catch (e) {
        report(path, snap.id, `manifest cannot be read: ${message(e)}`);
        continue;
      }
      for (const e of entries) {
        const key = `${e.bucket}|${Buffer.from(e.partition).toString('hex')}|${e.file.fileName}`;
        if (e.kind === 'ADD') live.set(key, e);
        else if (!live.delete(key)) report(path, snap.id, `deletes ${e.file.fileName}, which no earlier manifest adds`);
      }
    }
    const schema = await table.schemaManager.latest();
    const locator = new DataFileLocator(paths, schema);
    for (const e of live.values()) work.push({ entry: e, path: locator.dataFile(e), snapshotId: snap.id });
    await checkDeletionVectors(snap, live);
  }

  const unique = work.filter((w, i) => work.findIndex((x) => x.path === w.path) === i);
  let done = 0;
  for (const w of unique) {
    checkAborted(options.signal);
    if (!checkedFiles.has(w.path)) {
      let problem: string | null = null;
      try {
        rowsChecked += await checkDataFile(table, w.entry, w.path, options.metadataOnly === true);
      } catch (e) {
        problem = message(e).startsWith(w.path) ? message(e).slice(w.path.length + 2) : message(e);
      }
      checkedFiles.set(w.path, problem);
      if (problem !== null) report(w.path, w.snapshotId, problem);
    }
    options.onProgress?.(++done, unique.length);
  }

  return {
    table: table.location,
    ok: problems.length === 0,
    snapshotsChecked: snapshots.map((s) => s.id),
    changelogsChecked: changelogs.map((c) => c.id),
    manifestsChecked,
    dataFilesChecked: unique.length,
    rowsChecked,
    problems,
  };
}

/** Checks one data file; returns its row count. Throws describing the first problem. */
async function checkDataFile(table: Table, entry: ManifestEntry, path: string, metadataOnly: boolean): Promise<number> {
  const io = table.fileIO;
  let size: number;
  try {
    size = (await io.stat(path)).size;
  } catch (e) {
    throw new Error(`missing or unreadable: ${message(e)}`);
  }
  if (size !== entry.file.fileSize) throw new Error(`the file is ${size} bytes, but its manifest entry records ${entry.file.fileSize}`);
  if (metadataOnly) return 0;
  const schema = await table.schemaManager.schema(entry.file.schemaId);
  const keyValue = schema.primaryKeys.length > 0;
  const fields: readonly DataField[] = schema.fields;
  const collector = keyValue ? null : new FileStatsCollector(fields, tableOptions(schema));
  let rows = 0;
  const read = dataFileFormat(path, tableOptions(schema).fileFormat) === 'orc' ? readOrcFile : readParquetFile;
  for await (const raw of read(io, path, { fileSize: entry.file.fileSize, rowCount: entry.file.rowCount })) {
    rows += raw.numRows;
    if (collector) collector.add(conformToPaimonTypes(raw, fields));
  }
  if (collector) checkStats(entry, fields, collector);
  return rows;
}

/** The decoded values must lie within the recorded bounds, with the recorded null counts. */
function checkStats(entry: ManifestEntry, fields: readonly DataField[], collector: FileStatsCollector): void {
  const cols = entry.file.valueStatsCols ?? fields.map((f) => f.name);
  const statFields = cols.map((c) => fields.find((f) => f.name === c)).filter((f): f is DataField => f !== undefined);
  if (statFields.length !== cols.length) return; // stats of another schema version: nothing to compare safely
  const types = statFields.map((f) => f.type);
  const recorded = entry.file.valueStats;
  let mins: Value[];
  let maxs: Value[];
  try {
    mins = deserializeBinaryRow(recorded.minValues, types);
    maxs = deserializeBinaryRow(recorded.maxValues, types);
  } catch {
    return; // empty or differently shaped stats rows (e.g. stats-mode none)
  }
  const actual = collector.result();
  const actualCols = actual.valueStatsCols ?? fields.map((f) => f.name);
  let aMins: Value[];
  let aMaxs: Value[];
  const aTypes = actualCols.map((c: string) => fields.find((f) => f.name === c)!.type);
  try {
    aMins = deserializeBinaryRow(actual.valueStats.minValues, aTypes);
    aMaxs = deserializeBinaryRow(actual.valueStats.maxValues, aTypes);
  } catch {
    return;
  }
  statFields.forEach((f, i) => {
    const j = actualCols.indexOf(f.name);
    if (j < 0) return;
    const nulls = recorded.nullCounts?.[i];
    const aNulls = actual.valueStats.nullCounts?.[j];
    if (nulls !== null && nulls !== undefined && aNulls !== null && aNulls !== undefined && nulls !== aNulls) {
      throw new Error(`column '${f.name}' has ${aNulls} NULLs, but the manifest entry records ${nulls}`);
    }
    const lo = mins[i] ?? null;
    const hi = maxs[i] ?? null;
    const aLo = aMins[j] ?? null;
    const aHi = aMaxs[j] ?? null;
    if (lo !== null && aLo !== null && compareValues(aLo, lo) < 0)
      throw new Error(`column '${f.name}' holds a value below the recorded minimum`);
    if (hi !== null && aHi !== null && compareValues(aHi, hi) > 0)
      throw new Error(`column '${f.name}' holds a value above the recorded maximum`);
  });
}
