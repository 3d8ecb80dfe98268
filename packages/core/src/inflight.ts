/**
 * In-flight file records: the contract between writers that hold written-but-uncommitted files
 * (table writers, committers writing manifests, the exactly-once sink) and orphan-file cleanup.
 *
 * A writer records what it is about to write in `<table>/inflight/<id>.json`:
 *
 * ```json
 * {"files": ["dt=1/bucket-0/data-….parquet"], "prefixes": ["data-<uuid>-"], "createdAt": 1718000000000}
 * ```
 *
 * - `files`: explicit paths relative to the table root (the sink's checkpoints;
 *   `id` = `<commitUser>-<checkpointId>`).
 * - `prefixes` (optional; records written before it existed have none): file-NAME prefixes
 *   (no `/`). Every file whose name starts with one of them is in flight, wherever it lies in the
 *   table. A `TableWrite` records `<data-file.prefix><writerUuid>-` (id `write-<uuid>`), a
 *   commit records `manifest-<uuid>-`, `manifest-list-<uuid>-` and `index-manifest-<uuid>-`
 *   (id `commit-<uuid>`). One small record thus covers any number of files, written before the
 *   first of them.
 *
 * Orphan cleanup treats every listed file and every file matching a prefix as used, whatever its
 * age, and re-reads the records after listing the candidates of each delete batch. It removes a
 * record itself only when it is older than {@link INFLIGHT_RECORD_MAX_AGE_MS}: a prefix record
 * then regardless (its writer is certainly gone), a files-only record when every file it lists is
 * committed or gone. Rules for writers:
 * - Record the files (or their prefix) **before** writing them: a file that exists without a
 *   record can be deleted by a cleanup that runs with a short `olderThan`. Recording names you end
 *   up not writing is harmless.
 * - Clear the record only **after** the commit that contains the files has succeeded (the
 *   snapshot exists), or after the files were deleted on abort. Cleanup reads records before
 *   snapshots, so a record that is gone implies its snapshot is visible to that cleanup.
 * - Writers that live longer than a day rewrite their record (fresh `createdAt`) at least daily
 *   ({@link INFLIGHT_RECORD_REFRESH_MS}).
 * - One record per id; rewriting the same id replaces it.
 *
 * Java Paimon does not know this directory; its orphan cleanup ignores unknown directories, so the
 * records neither disturb nor protect anything from Java's point of view.
 */
import { NotFoundError, joinPath, type FileIO } from '@tidemark/storage';
import { parseJson } from '@tidemark/format';
import { TidemarkError, TidemarkUserError } from './errors.js';

/** Directory of in-flight records, relative to the table root. */
export const INFLIGHT_DIR = 'inflight';
/** Suffix of in-flight record files. */
export const INFLIGHT_SUFFIX = '.json';
/** Orphan cleanup never deletes a record younger than this (7 days). */
export const INFLIGHT_RECORD_MAX_AGE_MS = 7 * 24 * 3_600_000;
/** Long-lived writers rewrite their record when it is older than this (1 day), far below {@link INFLIGHT_RECORD_MAX_AGE_MS}. */
export const INFLIGHT_RECORD_REFRESH_MS = 24 * 3_600_000;

/** Contents of one in-flight record file. */
export interface InflightRecord {
  /** Files of the pending commit, relative to the table root (`<partition dirs>/bucket-<b>/<name>`). */
  readonly files: readonly string[];
  /**
   * File-name prefixes: every file whose name (last path segment) starts with one of them is in
   * flight. Empty for records without the member (written by older versions).
   */
  readonly prefixes: readonly string[];
  /** Creation time, epoch millis. */
  readonly createdAt: number;
}

/** A record as found by {@link listInflightRecords}. */
export interface InflightRecordFile {
  /** Record id (file name without `.json`). */
  readonly id: string;
  /** Full location of the record file. */
  readonly path: string;
  readonly lastModified: Date;
  readonly record: InflightRecord;
}

/** Invalid record id, file path or prefix given to {@link recordInflightFiles} / {@link recordInflightPrefixes}. */
export class InflightRecordError extends TidemarkUserError {}

/** A record file that is not valid JSON of the expected shape. */
export class CorruptInflightRecordError extends TidemarkError {
  constructor(
    readonly path: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`in-flight record ${path} is corrupt: ${detail}. Fix or remove it (after making sure its writer is gone)`, options);
  }
}

/** `<table>/inflight` */
export function inflightDir(tablePath: string): string {
  return joinPath(tablePath, INFLIGHT_DIR);
}

/** `<table>/inflight/<id>.json` */
export function inflightRecordPath(tablePath: string, id: string): string {
  checkId(id);
  return joinPath(inflightDir(tablePath), `${id}${INFLIGHT_SUFFIX}`);
}

/** The conventional record id of a sink checkpoint. */
export function inflightRecordId(commitUser: string, checkpointId: bigint | number): string {
  return `${commitUser}-${checkpointId}`;
}

function checkId(id: string): void {
  if (typeof id !== 'string' || id === '' || id.startsWith('.') || /[/\\]/.test(id) || /[\u0000-\u001f]/.test(id)) {
    throw new InflightRecordError(
      `in-flight record id '${id}' must be non-empty, must not start with '.' and must not contain '/', '\\' or control characters`,
    );
  }
}

/** Normalizes and validates a table-relative file path (no scheme, no `..`, no leading slash). */
export function normalizeInflightFile(file: string): string {
  const rel = file.replace(/^\/+/, '');
  if (rel === '' || /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.test(file) || rel.split('/').some((s) => s === '..' || s === '.')) {
    throw new InflightRecordError(
      `in-flight file '${file}' must be a path relative to the table root (e.g. 'dt=1/bucket-0/data-x.parquet')`,
    );
  }
  return rel;
}

/** Validates a file-name prefix (non-empty, no `/` or `\\`, no control characters, not hidden). */
export function checkInflightPrefix(prefix: string): string {
  if (typeof prefix !== 'string' || prefix === '' || prefix.startsWith('.') || /[/\\]/.test(prefix) || /[\u0000-\u001f]/.test(prefix)) {
    throw new InflightRecordError(
      `in-flight prefix '${prefix}' must be a non-empty file-name prefix (e.g. 'data-<uuid>-') without '/', '\\', control characters or a leading '.'`,
    );
  }
  return prefix;
}

/** Options of {@link recordInflightFiles} and {@link recordInflightPrefixes}. */
export interface RecordInflightOptions {
  /** File-name prefixes to record along with the files (see {@link InflightRecord.prefixes}). */
  readonly prefixes?: readonly string[];
  /** Clock for `createdAt` (tests). */
  readonly now?: () => number;
}

/**
 * Records `files` (paths relative to `tablePath`) and `options.prefixes` as in flight under `id`.
 * Call before writing the files; overwrites an existing record of the same id.
 *
 * @throws InflightRecordError for an invalid id, path or prefix.
 */
export async function recordInflightFiles(
  io: FileIO,
  tablePath: string,
  id: string,
  files: readonly string[],
  options: RecordInflightOptions = {},
): Promise<void> {
  const path = inflightRecordPath(tablePath, id);
  const normalized = files.map(normalizeInflightFile);
  const prefixes = (options.prefixes ?? []).map(checkInflightPrefix);
  const createdAt = (options.now ?? Date.now)();
  // `files` stays present (possibly empty) so that readers predating `prefixes` still parse it.
  const record = prefixes.length > 0 ? { files: normalized, prefixes, createdAt } : { files: normalized, createdAt };
  await io.write(path, JSON.stringify(record));
}

/**
 * Records every file whose name starts with one of `prefixes` as in flight under `id` (a writer
 * whose file names are not known in advance). Call before writing the first such file.
 *
 * @throws InflightRecordError for an invalid id or prefix, or when `prefixes` is empty.
 */
export async function recordInflightPrefixes(
  io: FileIO,
  tablePath: string,
  id: string,
  prefixes: readonly string[],
  options: { now?: () => number } = {},
): Promise<void> {
  if (prefixes.length === 0) throw new InflightRecordError(`in-flight record '${id}' needs at least one prefix`);
  await recordInflightFiles(io, tablePath, id, [], { ...options, prefixes });
}

/** Removes the record `id` (missing records are fine). Call after the commit of its files succeeded. */
export async function clearInflightFiles(io: FileIO, tablePath: string, id: string): Promise<void> {
  await io.delete(inflightRecordPath(tablePath, id));
}

/** Parses a record file's bytes. */
export function parseInflightRecord(bytes: Uint8Array | string, path: string): InflightRecord {
  let value: unknown;
  try {
    value = parseJson(typeof bytes === 'string' ? bytes : new TextDecoder().decode(bytes));
  } catch (cause) {
    throw new CorruptInflightRecordError(path, 'not valid JSON', { cause });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new CorruptInflightRecordError(path, 'not a JSON object');
  const o = value as Record<string, unknown>;
  if (!Array.isArray(o.files) || !o.files.every((f) => typeof f === 'string')) {
    throw new CorruptInflightRecordError(path, "member 'files' must be an array of strings");
  }
  const raw = o.createdAt;
  const createdAt = typeof raw === 'bigint' ? Number(raw) : typeof raw === 'number' ? raw : Number.NaN;
  if (!Number.isFinite(createdAt)) throw new CorruptInflightRecordError(path, "member 'createdAt' must be epoch millis");
  let prefixes: string[] = [];
  if (o.prefixes !== undefined) {
    // An empty prefix would protect every file: conservative, so accepted rather than guessed at.
    if (!Array.isArray(o.prefixes) || !o.prefixes.every((f) => typeof f === 'string')) {
      throw new CorruptInflightRecordError(path, "member 'prefixes' must be an array of strings");
    }
    prefixes = o.prefixes as string[];
  }
  return { files: (o.files as string[]).map((f) => f.replace(/^\/+/, '')), prefixes, createdAt };
}

/**
 * Streams the in-flight records of a table. Hidden and non-`.json` files (temporary files of a
 * record being written) are skipped; a record deleted while listing is skipped. A corrupt record
 * throws: a cleanup must not guess what it protected.
 */
export async function* listInflightRecords(io: FileIO, tablePath: string): AsyncGenerator<InflightRecordFile> {
  for await (const st of io.list(inflightDir(tablePath), { recursive: false })) {
    const name = st.path.slice(st.path.lastIndexOf('/') + 1);
    if (name.startsWith('.') || !name.endsWith(INFLIGHT_SUFFIX)) continue;
    let bytes: Uint8Array;
    try {
      bytes = await io.read(st.path);
    } catch (e) {
      if (e instanceof NotFoundError) continue;
      throw e;
    }
    yield {
      id: name.slice(0, -INFLIGHT_SUFFIX.length),
      path: st.path,
      lastModified: st.lastModified,
      record: parseInflightRecord(bytes, st.path),
    };
  }
}
