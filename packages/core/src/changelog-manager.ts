/**
 * Long-lived changelogs, stored as Paimon stores them: when the changelog is retained longer than
 * the snapshots (`changelog.num-retained.*` / `changelog.time-retained` above the snapshot
 * settings), snapshot expiration keeps each expiring snapshot's JSON as
 * `changelog/changelog-<id>` (under the branch's metadata root) and leaves its changelog files and
 * changelog manifests in place; changelog expiration removes them later. Ids continue the snapshot
 * ids: changelog `n` is the changes of the expired snapshot `n`. `changelog/EARLIEST` and
 * `changelog/LATEST` are best-effort hints, checked against the files like the snapshot hints.
 */
import type { FileIO } from '@tidemark/storage';
import { parseSnapshot, serializeSnapshot, type Snapshot } from '@tidemark/format';
import { readIfExists } from './meta-files.js';
import { listNumberedFiles, readHint } from './snapshot-manager.js';
import { CHANGELOG_PREFIX, type TablePaths } from './table-paths.js';

/** Reads and writes the long-lived changelogs of one table (branch). */
export class ChangelogManager {
  constructor(
    readonly fileIO: FileIO,
    readonly paths: TablePaths,
  ) {}

  private exists(id: number): Promise<boolean> {
    return this.fileIO.exists(this.paths.changelogMetaPath(id));
  }

  /** Reads changelog `id`, or null when there is none. */
  async tryGet(id: number): Promise<Snapshot | null> {
    const path = this.paths.changelogMetaPath(id);
    const bytes = await readIfExists(this.fileIO, path);
    return bytes === null ? null : parseSnapshot(bytes, path);
  }

  /**
   * Keeps `snapshot` as a long-lived changelog (an overwrite, as Java's `commitChangelog`: a rerun
   * of an interrupted expiration writes the same content again), and moves the LATEST hint.
   */
  async commit(snapshot: Snapshot): Promise<void> {
    await this.fileIO.write(this.paths.changelogMetaPath(snapshot.id), serializeSnapshot(snapshot));
    await this.fileIO.write(this.paths.changelogLatestHint, String(snapshot.id));
  }

  /** Deletes changelog `id` (a missing file is not an error). */
  async delete(id: number): Promise<void> {
    await this.fileIO.delete(this.paths.changelogMetaPath(id));
  }

  async writeEarliestHint(id: number): Promise<void> {
    await this.fileIO.write(this.paths.changelogEarliestHint, String(id));
  }

  /** Streams the ids of the changelog files (listing order). */
  listIds(): AsyncGenerator<number> {
    return listNumberedFiles(this.fileIO, this.paths.changelogDir, CHANGELOG_PREFIX);
  }

  /**
   * Id of the oldest long-lived changelog, or null when there is none. EARLIEST is trusted when
   * its changelog exists (as Java does): changelog expiration deletes changelogs in batches and
   * moves the hint past a batch before deleting it, so files below it are leftovers of an
   * interrupted run, invisible to readers; the next expiration deletes them (see
   * {@link earliestProbe}).
   */
  async earliestId(): Promise<number | null> {
    return (await this.earliestProbe()).id;
  }

  /**
   * {@link earliestId}, plus whether changelog files below it may be left over (changelog n-1
   * exists, n from a trusted hint). Expiration deletes the newest file of each batch last, so after
   * a completed batch n-1 is gone; the check is issued together with the hint check.
   */
  async earliestProbe(): Promise<{ readonly id: number | null; readonly leftoversBelow: boolean }> {
    const hint = await readHint(this.fileIO, this.paths.changelogEarliestHint);
    if (hint !== null) {
      const [here, prev] = await Promise.all([this.exists(hint), hint > 1 ? this.exists(hint - 1) : Promise.resolve(false)]);
      if (here) return { id: hint, leftoversBelow: prev };
    }
    return { id: await this.listExtreme('min'), leftoversBelow: false };
  }

  /** Streams the ids of changelog files below `earliest` (leftovers of an interrupted expiration). */
  async *leftoverIds(earliest: number): AsyncGenerator<number> {
    for await (const id of this.listIds()) if (id < earliest) yield id;
  }

  /** Id of the newest long-lived changelog, or null when there is none. */
  async latestId(): Promise<number | null> {
    const hint = await readHint(this.fileIO, this.paths.changelogLatestHint);
    if (hint !== null) {
      const [here, next] = await Promise.all([this.exists(hint), this.exists(hint + 1)]);
      if (here && !next) return hint;
    }
    return this.listExtreme('max');
  }

  private async listExtreme(which: 'min' | 'max'): Promise<number | null> {
    let best: number | null = null;
    for await (const id of this.listIds()) {
      if (best === null || (which === 'max' ? id > best : id < best)) best = id;
    }
    return best;
  }
}
