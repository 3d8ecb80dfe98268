/**
 * Deletion of the files an expiration found unused, counted for its summary: each step hands its
 * files as one stream to {@link FileDeleter.deleteAll}, which sends them to one `deleteMany` (S3:
 * 1,000 keys per request, a few requests in flight), without existence checks (deleting a
 * missing file is not an error, and sizes come from the metadata). A dry run counts and lists
 * the same stream and deletes nothing.
 */
import type { FileIO } from '@tidemark/storage';
import { checkAborted, type MaintenanceProgress, type MaintenanceSummary } from './table-files.js';

/** A file to delete, with its size as the metadata gives it. */
export interface FileRef {
  readonly path: string;
  readonly size: number;
}

/** Settings of a {@link FileDeleter}. */
export interface FileDeleterOptions {
  readonly dryRun: boolean;
  /** Keep the locations for the summary (`deleted`). */
  readonly listDeleted: boolean;
  /** Checked every 1,000 files of a stream. */
  readonly signal?: AbortSignal | undefined;
  /** Told the files done of each phase (every 1,000 and at its end), when set. */
  readonly onProgress?: ((progress: MaintenanceProgress) => void) | undefined;
}

/** Deletes (or, in a dry run, lists) the files of an expiration and counts them. */
export class FileDeleter {
  filesDeleted = 0;
  /** Sum of the sizes the metadata gave for the files deleted. */
  bytesFreed = 0;
  /** The locations deleted, when listed. */
  readonly deleted: string[] = [];

  constructor(
    private readonly io: FileIO,
    readonly options: FileDeleterOptions,
  ) {}

  get dryRun(): boolean {
    return this.options.dryRun;
  }

  /** Reports progress of `phase`, with the bytes freed so far. */
  progress(phase: string, done: number, total?: number): void {
    this.options.onProgress?.({ phase, done, bytesFreed: this.bytesFreed, ...(total !== undefined ? { total } : {}) });
  }

  /** Deletes a stream of files as one batched `deleteMany`. */
  async deleteAll(phase: string, files: Iterable<FileRef> | AsyncIterable<FileRef>): Promise<void> {
    const done = { n: 0 };
    const paths = this.counted(phase, files, done);
    if (this.dryRun) for await (const _ of paths);
    else await this.io.deleteMany(paths);
    this.progress(phase, done.n);
  }

  private async *counted(phase: string, files: Iterable<FileRef> | AsyncIterable<FileRef>, done: { n: number }): AsyncGenerator<string> {
    for await (const f of files) {
      if (done.n % 1000 === 0) {
        checkAborted(this.options.signal);
        if (done.n > 0) this.progress(phase, done.n);
      }
      if (this.options.listDeleted) this.deleted.push(f.path);
      this.filesDeleted++;
      this.bytesFreed += f.size;
      done.n++;
      yield f.path;
    }
  }

  /** Counts files the caller deletes itself (metadata files, whose order matters). */
  record(paths: readonly string[]): void {
    if (this.options.listDeleted) this.deleted.push(...paths);
    this.filesDeleted += paths.length;
  }

  /** The fields of a {@link MaintenanceSummary} for a run that started at `started` (epoch millis). */
  summary(started: number): MaintenanceSummary {
    return {
      filesDeleted: this.filesDeleted,
      bytesFreed: this.bytesFreed,
      durationMs: Date.now() - started,
      dryRun: this.dryRun,
      ...this.listed(),
    };
  }

  /** The `deleted` field of a summary: present when the locations are listed. */
  listed(): { deleted?: string[] } {
    return this.options.listDeleted ? { deleted: this.deleted } : {};
  }
}
