/**
 * In-flight file records: the contract between writers that hold prepared-but-uncommitted data
 * files (the exactly-once sink) and orphan-file cleanup.
 *
 * A writer that keeps files uncommitted for a while (across a checkpoint) records them in
 * `<table>/inflight/<id>.json` (`id` = `<commitUser>-<checkpointId>`):
 *
 * ```json
 * {"files": ["dt=1/bucket-0/data-….parquet", "bucket-0/data-….parquet"], "createdAt": 1718000000000}
 * ```
 *
 * Paths are relative to the table root. Orphan cleanup treats every listed file as used, whatever
 * its age, and removes a record itself only when it is older than {@link INFLIGHT_RECORD_MAX_AGE_MS}
 * and every file it lists is committed or gone. Rules for writers:
 * - Record the files **before** writing them (a file that exists without a record can be deleted
 *   by a cleanup that runs with a short `olderThan`). Recording names you end up not writing is
 *   harmless.
 * - Clear the record only **after** the commit that contains the files has succeeded (or after
 *   the files were deleted on abort).
 * - One record per (commitUser, checkpoint); rewriting the same id replaces it.
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

/** Contents of one in-flight record file. */
export interface InflightRecord {
  /** Files of the pending commit, relative to the table root (`<partition dirs>/bucket-<b>/<name>`). */
  readonly files: readonly string[];
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

/** Invalid record id or file path given to {@link recordInflightFiles}. */
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
    throw new InflightRecordError(`in-flight record id '${id}' must be non-empty, must not start with '.' and must not contain '/', '\\' or control characters`);
  }
}

/** Normalizes and validates a table-relative file path (no scheme, no `..`, no leading slash). */
export function normalizeInflightFile(file: string): string {
  const rel = file.replace(/^\/+/, '');
  if (rel === '' || /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.test(file) || rel.split('/').some((s) => s === '..' || s === '.')) {
    throw new InflightRecordError(`in-flight file '${file}' must be a path relative to the table root (e.g. 'dt=1/bucket-0/data-x.parquet')`);
  }
  return rel;
}

/**
 * Records `files` (paths relative to `tablePath`) as in flight under `id`. Call before writing
 * the files; overwrites an existing record of the same id.
 */
export async function recordInflightFiles(
  io: FileIO,
  tablePath: string,
  id: string,
  files: readonly string[],
  options: { now?: () => number } = {},
): Promise<void> {
  const record: InflightRecord = { files: files.map(normalizeInflightFile), createdAt: (options.now ?? Date.now)() };
  await io.write(inflightRecordPath(tablePath, id), JSON.stringify(record));
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
  return { files: (o.files as string[]).map((f) => f.replace(/^\/+/, '')), createdAt };
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
    yield { id: name.slice(0, -INFLIGHT_SUFFIX.length), path: st.path, lastModified: st.lastModified, record: parseInflightRecord(bytes, st.path) };
  }
}
