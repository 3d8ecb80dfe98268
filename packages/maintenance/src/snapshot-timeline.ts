/**
 * The snapshot timeline of a table report: for the newest retained snapshots, the kind and time of
 * each commit and what its delta manifests added and removed. Only sums are kept per snapshot.
 */
import { NotFoundError } from '@tidemark/storage';
import { readManifestEntries, readManifestList } from '@tidemark/format';
import { checkAborted, type SnapshotManager } from '@tidemark/core';
import type { MaintainedTable } from '@tidemark/core';
import type { SnapshotTimeline, TimelineSnapshot } from './table-report.js';

/** Snapshots read at once: enough to hide object-store latency, few enough to be polite. */
const CONCURRENCY = 8;

/** Reads the timeline of the newest `limit` snapshots. */
export async function collectTimeline(
  table: MaintainedTable & { readonly snapshotManager: SnapshotManager },
  limit: number,
  signal?: AbortSignal,
): Promise<SnapshotTimeline> {
  const ids = await table.snapshotManager.sortedIds();
  const shown = ids.slice(Math.max(0, ids.length - limit));
  const snapshots: TimelineSnapshot[] = [];
  for (let i = 0; i < shown.length; i += CONCURRENCY) {
    checkAborted(signal);
    const batch = await Promise.all(shown.slice(i, i + CONCURRENCY).map((id) => timelineEntry(table, id)));
    for (const s of batch) if (s !== null) snapshots.push(s);
  }
  const byKind: Record<string, number> = {};
  for (const s of snapshots) byKind[s.kind] = (byKind[s.kind] ?? 0) + 1;
  return {
    retained: ids.length,
    earliestSnapshotId: ids[0] ?? null,
    latestSnapshotId: ids[ids.length - 1] ?? null,
    snapshots,
    omitted: ids.length - shown.length,
    byKind,
  };
}

/** One snapshot's sums, or null when it expired while the report was being made. */
async function timelineEntry(
  table: MaintainedTable & { readonly snapshotManager: SnapshotManager },
  id: number,
): Promise<TimelineSnapshot | null> {
  const s = await table.snapshotManager.tryGet(id);
  if (s === null) return null;
  const sums = { rowsAdded: 0, rowsRemoved: 0, filesAdded: 0, filesRemoved: 0, bytesAdded: 0, bytesRemoved: 0 };
  try {
    for (const m of await readManifestList(table.fileIO, table.paths.manifestPath(s.deltaManifestList))) {
      for await (const e of readManifestEntries(table.fileIO, table.paths.manifestPath(m.fileName))) {
        if (e.kind === 'DELETE') {
          sums.rowsRemoved += e.file.rowCount;
          sums.filesRemoved++;
          sums.bytesRemoved += e.file.fileSize;
        } else {
          sums.rowsAdded += e.file.rowCount;
          sums.filesAdded++;
          sums.bytesAdded += e.file.fileSize;
        }
      }
    }
  } catch (e) {
    // Expiration deletes a snapshot's manifests before the snapshot file: gone means expired meanwhile.
    if (e instanceof NotFoundError && (await table.snapshotManager.tryGet(id)) === null) return null;
    throw e;
  }
  return { id, timeMillis: s.timeMillis, kind: s.commitKind, ...sums, totalRecordCount: s.totalRecordCount ?? null };
}
