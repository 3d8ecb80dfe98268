/**
 * What a compaction checks against the latest snapshot when its commit lost a race: which of its
 * jobs still have every input live (they can be committed again), and whether any of its output
 * files made it into the table (then they must not be deleted).
 */
import { liveEntries, partitionKey, type DataSplit, type Table } from '@tidemark/core';
import { fileEntryIdentity, type DataFileMeta } from '@tidemark/format';

/** A compaction job's bucket and the files it read (`inputs`) or wrote (`outputs`). */
export interface CompactionFiles {
  readonly split: Pick<DataSplit, 'partition' | 'bucket' | 'totalBuckets'>;
  readonly files: readonly DataFileMeta[];
}

/** The live entries of the latest snapshot in the partitions of `jobs` (keyed by file identity); none without a snapshot. */
async function liveInPartitions(table: Table, splits: readonly CompactionFiles['split'][]) {
  const latest = await table.snapshotManager.latest();
  if (latest === null) return null;
  const partitions = new Set(splits.map((s) => partitionKey(s.partition)));
  return liveEntries(table.fileIO, table.paths, latest, (p) => partitions.has(partitionKey(p)));
}

/** Splits `jobs` into those whose inputs (`inputsOf`) are all still live in the latest snapshot and the rest. */
export async function splitByLiveInputs<J>(
  table: Table,
  jobs: readonly J[],
  inputsOf: (job: J) => CompactionFiles,
): Promise<{ keep: J[]; lost: J[] }> {
  const live =
    (await liveInPartitions(
      table,
      jobs.map((j) => inputsOf(j).split),
    )) ?? new Map<string, unknown>();
  const keep: J[] = [];
  const lost: J[] = [];
  for (const j of jobs) {
    const { split, files } = inputsOf(j);
    const allLive = files.every((f) =>
      live.has(
        fileEntryIdentity({ kind: 'ADD', partition: split.partition, bucket: split.bucket, totalBuckets: split.totalBuckets, file: f }),
      ),
    );
    (allLive ? keep : lost).push(j);
  }
  return { keep, lost };
}

/**
 * Whether any output file of `jobs` (`outputsOf`) is live in the latest snapshot; true when that
 * cannot be read (keeping the files is safe: orphan cleanup removes them if unreferenced).
 */
export async function anyOutputLive<J>(table: Table, jobs: readonly J[], outputsOf: (job: J) => CompactionFiles): Promise<boolean> {
  try {
    const outputs = jobs.map(outputsOf);
    const live = await liveInPartitions(
      table,
      outputs.map((o) => o.split),
    );
    if (live === null) return false;
    const names = new Set(outputs.flatMap((o) => o.files.map((f) => f.fileName)));
    for (const e of live.values()) if (names.has(e.file.fileName)) return true;
    return false;
  } catch {
    return true;
  }
}
