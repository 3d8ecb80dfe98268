/** The manifest entries of snapshots, read the way the suites that check what a commit wrote need them. */
import { readManifestEntries, readManifestList, type ManifestEntry } from '@tidemark/format';
import type { Table } from '@tidemark/core';

/** The entries of snapshot `snapshotId`'s delta manifests: what that commit added and deleted. */
export async function deltaEntries(table: Table, snapshotId: number): Promise<ManifestEntry[]> {
  const snapshot = await table.snapshotManager.snapshot(snapshotId);
  const out: ManifestEntry[] = [];
  for (const m of await readManifestList(table.fileIO, table.paths.manifestPath(snapshot.deltaManifestList))) {
    for await (const e of readManifestEntries(table.fileIO, table.paths.manifestPath(m.fileName))) out.push(e);
  }
  return out;
}
