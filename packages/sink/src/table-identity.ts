/**
 * Identity of a table for checkpoint states, and lookups of what a commit user committed.
 */
import { createHash } from 'node:crypto';
import { MAIN_BRANCH, SnapshotManager, listNumberedFiles, metadataPaths } from '@tidemark/core';
import type { Snapshot } from '@tidemark/format';
import { NotFoundError, type FileIO } from '@tidemark/storage';
import { SinkError } from './errors.js';

/**
 * SHA-256 (first 32 hex chars) of the table's first schema file. Schema files are immutable, so
 * the fingerprint survives moving the table and changes when a table is dropped and recreated.
 * A branch other than main (whose first schema is a copy of main's) adds its name, so that a
 * checkpoint state of one branch is not taken for another's.
 */
export async function tableFingerprint(io: FileIO, tableLocation: string, branch: string = MAIN_BRANCH): Promise<string> {
  const paths = metadataPaths(tableLocation, branch);
  let bytes: Uint8Array;
  try {
    bytes = await io.read(paths.schemaPath(0));
  } catch (e) {
    if (!(e instanceof NotFoundError)) throw e;
    let first: number | null = null;
    for await (const id of listNumberedFiles(io, paths.schemaDir, 'schema-')) if (first === null || id < first) first = id;
    if (first === null) throw new SinkError(`${tableLocation} has no schema files; is it a table?`);
    bytes = await io.read(paths.schemaPath(first));
  }
  const hash = createHash('sha256').update(bytes);
  if (branch !== MAIN_BRANCH) hash.update(`\0branch:${branch}`);
  return hash.digest('hex').slice(0, 32);
}

/**
 * The newest snapshot written by `commitUser` (on `branch`, default main), scanning backwards from the latest and stopping at
 * the first missing snapshot (as Paimon's `filterCommitted` does), or null.
 */
export async function lastSnapshotOf(io: FileIO, tableLocation: string, commitUser: string, branch?: string): Promise<Snapshot | null> {
  const snapshots = new SnapshotManager(io, metadataPaths(tableLocation, branch));
  const latest = await snapshots.latestId();
  if (latest === null) return null;
  for (let id = latest; id >= 1; id--) {
    const s = await snapshots.tryGet(id);
    if (s === null) return null;
    if (s.commitUser === commitUser) return s;
  }
  return null;
}
