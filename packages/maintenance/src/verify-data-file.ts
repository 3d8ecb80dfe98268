/**
 * The data-file check of `verify`: a live data file exists with its recorded size, decodes, holds
 * its recorded row count, and (append files) its values lie within the manifest entry's value
 * statistics with the recorded null counts; its file index (sidecar or embedded) exists and decodes.
 */
import {
  conformToPaimonTypes,
  deserializeBinaryRow,
  FileIndexFile,
  readOrcFile,
  readParquetFile,
  type DataField,
  type ManifestEntry,
  type Value,
} from '@tidemark/format';
import { compareValues, dataFileFormat, FileStatsCollector, tableOptions, type Table } from '@tidemark/core';

export const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** Checks one data file; returns its row count. Throws describing the first problem. */
export async function checkDataFile(table: Table, entry: ManifestEntry, path: string, metadataOnly: boolean): Promise<number> {
  const io = table.fileIO;
  let size: number;
  try {
    size = (await io.stat(path)).size;
  } catch (e) {
    throw new Error(`missing or unreadable: ${message(e)}`);
  }
  if (size !== entry.file.fileSize) throw new Error(`the file is ${size} bytes, but its manifest entry records ${entry.file.fileSize}`);
  await checkFileIndex(table, entry, path, metadataOnly);
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

/** The file's index (embedded, or its `.index` sidecar, which must exist) is a Paimon file index. */
async function checkFileIndex(table: Table, entry: ManifestEntry, path: string, metadataOnly: boolean): Promise<void> {
  const dir = path.slice(0, path.lastIndexOf('/') + 1);
  for (const name of entry.file.extraFiles.filter((x) => x.endsWith('.index'))) {
    if (!(await table.fileIO.exists(dir + name))) throw new Error(`its file index ${name} (in _EXTRA_FILES) is missing`);
    if (!metadataOnly) {
      try {
        FileIndexFile.parse(await table.fileIO.read(dir + name), dir + name);
      } catch (e) {
        throw new Error(`its file index ${name} does not decode: ${message(e)}`);
      }
    }
  }
  if (entry.file.embeddedIndex !== null && !metadataOnly) {
    try {
      FileIndexFile.parse(entry.file.embeddedIndex, path);
    } catch (e) {
      throw new Error(`its embedded file index does not decode: ${message(e)}`);
    }
  }
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
