/**
 * Snapshot files (`snapshot/snapshot-N`): parsing and Java-compatible printing.
 */
import { CorruptFileError, FormatError } from './errors.js';
import { parseJson, stringifyJackson, type JsonObject, type JsonValue } from './json.js';

/** Kind of commit that produced a snapshot. */
export type CommitKind = 'APPEND' | 'COMPACT' | 'OVERWRITE' | 'ANALYZE';

const COMMIT_KINDS: readonly string[] = ['APPEND', 'COMPACT', 'OVERWRITE', 'ANALYZE'];

/** Batch writes use Java's `Long.MAX_VALUE` as commit identifier. */
export const BATCH_COMMIT_IDENTIFIER = 9223372036854775807n;

/** Snapshot file format version written by every Paimon since 0.3. */
export const SNAPSHOT_VERSION = 3;

/**
 * One snapshot. Optional members are `undefined` when absent or JSON `null`. Ids, sizes and record
 * counts are `number` (they stay far below 2^53); `commitIdentifier` and `watermark` are `bigint`
 * because Java routinely writes `Long.MAX_VALUE` / `Long.MIN_VALUE` there.
 */
export interface Snapshot {
  readonly version: number;
  /** 2.0+: random UUID of this snapshot. */
  readonly uuid?: string;
  readonly id: number;
  readonly schemaId: number;
  /** File name (no directory) of the manifest list of all files live before this commit. */
  readonly baseManifestList: string;
  readonly baseManifestListSize?: number;
  /** File name of the manifest list holding this commit's changes. */
  readonly deltaManifestList: string;
  readonly deltaManifestListSize?: number;
  readonly changelogManifestList?: string;
  readonly changelogManifestListSize?: number;
  /** Full index manifest (absent when the table has no index files). */
  readonly indexManifest?: string;
  readonly commitUser: string;
  /** 2.1+: Paimon version string of the writer. */
  readonly writerVersion?: string;
  readonly commitIdentifier: bigint;
  readonly commitKind: CommitKind;
  readonly timeMillis: number;
  /** ≤1.3 only (bucket -> offset); kept when read so rewrites preserve it. */
  readonly logOffsets?: Readonly<Record<string, number | bigint>>;
  readonly totalRecordCount?: number;
  readonly deltaRecordCount?: number;
  readonly changelogRecordCount?: number;
  readonly watermark?: bigint;
  /** Statistics file name. */
  readonly statistics?: string;
  readonly properties?: Readonly<Record<string, string>>;
  /** 1.3+ row tracking: next row id (0 when row tracking is off). */
  readonly nextRowId?: number;
  /** 2.0+: e.g. `WRITE`, `OVERWRITE`, `DELETE`. */
  readonly operation?: string;
}

/**
 * Parses a snapshot file.
 *
 * @param path used in error messages only.
 * @throws CorruptFileError when required members are missing or have the wrong type.
 */
export function parseSnapshot(text: string | Uint8Array, path: string): Snapshot {
  const o = parseObject(text, path);
  try {
    return snapshotFromJson(o);
  } catch (e) {
    throw new CorruptFileError(path, `invalid snapshot: ${(e as Error).message}`, { cause: e });
  }
}

/** @internal Parses JSON text into an object, wrapping errors with the file path. */
export function parseObject(text: string | Uint8Array, path: string): JsonObject {
  let json: JsonValue;
  try {
    const str = typeof text === 'string' ? text : new TextDecoder('utf-8', { fatal: true }).decode(text);
    json = parseJson(str, { exactDecimals: true });
  } catch (e) {
    throw new CorruptFileError(path, `not valid JSON: ${(e as Error).message}`, { cause: e });
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new CorruptFileError(path, 'expected a JSON object');
  }
  return json as JsonObject;
}

/** @internal Reads the snapshot members of a snapshot or tag JSON object. */
export function snapshotFromJson(o: JsonObject): Snapshot {
  const commitKind = reqString(o, 'commitKind');
  if (!COMMIT_KINDS.includes(commitKind)) throw new FormatError(`unknown commitKind '${commitKind}'`);
  const s: { -readonly [K in keyof Snapshot]: Snapshot[K] } = {
    version: optNumber(o, 'version') ?? SNAPSHOT_VERSION,
    id: reqNumber(o, 'id'),
    schemaId: reqNumber(o, 'schemaId'),
    baseManifestList: reqString(o, 'baseManifestList'),
    deltaManifestList: reqString(o, 'deltaManifestList'),
    commitUser: reqString(o, 'commitUser'),
    commitIdentifier: reqBigint(o, 'commitIdentifier'),
    commitKind: commitKind as CommitKind,
    timeMillis: reqNumber(o, 'timeMillis'),
  };
  const set = <K extends keyof Snapshot>(k: K, v: Snapshot[K] | undefined): void => {
    if (v !== undefined) s[k] = v;
  };
  set('uuid', optString(o, 'uuid'));
  set('baseManifestListSize', optNumber(o, 'baseManifestListSize'));
  set('deltaManifestListSize', optNumber(o, 'deltaManifestListSize'));
  set('changelogManifestList', optString(o, 'changelogManifestList'));
  set('changelogManifestListSize', optNumber(o, 'changelogManifestListSize'));
  set('indexManifest', optString(o, 'indexManifest'));
  set('writerVersion', optString(o, 'writerVersion'));
  set('totalRecordCount', optNumber(o, 'totalRecordCount'));
  set('deltaRecordCount', optNumber(o, 'deltaRecordCount'));
  set('changelogRecordCount', optNumber(o, 'changelogRecordCount'));
  set('watermark', optBigint(o, 'watermark'));
  set('statistics', optString(o, 'statistics'));
  set('nextRowId', optNumber(o, 'nextRowId'));
  set('operation', optString(o, 'operation'));
  const logOffsets = o['logOffsets'];
  if (logOffsets !== undefined && logOffsets !== null) {
    if (typeof logOffsets !== 'object' || Array.isArray(logOffsets)) throw new FormatError('"logOffsets" must be an object');
    const out: Record<string, number | bigint> = {};
    for (const [k, v] of Object.entries(logOffsets as JsonObject)) {
      if (typeof v !== 'number' && typeof v !== 'bigint') throw new FormatError(`logOffsets['${k}'] must be an integer`);
      out[k] = v;
    }
    s.logOffsets = out;
  }
  const props = o['properties'];
  if (props !== undefined && props !== null) {
    if (typeof props !== 'object' || Array.isArray(props)) throw new FormatError('"properties" must be an object');
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(props as JsonObject)) {
      if (typeof v !== 'string') throw new FormatError(`properties['${k}'] must be a string`);
      Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    }
    s.properties = out;
  }
  return s;
}

/** @internal Snapshot members in Java's write order; absent optional members are `undefined`. */
export function snapshotToJson(s: Snapshot): JsonObject {
  return {
    version: s.version,
    uuid: s.uuid,
    id: s.id,
    schemaId: s.schemaId,
    baseManifestList: s.baseManifestList,
    baseManifestListSize: s.baseManifestListSize,
    deltaManifestList: s.deltaManifestList,
    deltaManifestListSize: s.deltaManifestListSize,
    changelogManifestList: s.changelogManifestList,
    changelogManifestListSize: s.changelogManifestListSize,
    indexManifest: s.indexManifest,
    commitUser: s.commitUser,
    writerVersion: s.writerVersion,
    commitIdentifier: s.commitIdentifier,
    commitKind: s.commitKind,
    timeMillis: s.timeMillis,
    logOffsets: s.logOffsets === undefined ? undefined : { ...s.logOffsets },
    totalRecordCount: s.totalRecordCount,
    deltaRecordCount: s.deltaRecordCount,
    changelogRecordCount: s.changelogRecordCount,
    watermark: s.watermark,
    statistics: s.statistics,
    properties: s.properties === undefined || Object.keys(s.properties).length === 0 ? undefined : { ...s.properties },
    nextRowId: s.nextRowId,
    operation: s.operation,
  };
}

/**
 * Prints a snapshot in Java's member order with Jackson pretty printing. Members that are
 * `undefined` are omitted (so a snapshot built per the spec's recommended writer output contains
 * only what it sets); `properties` is omitted when empty. Readable by Java 0.9+.
 */
export function serializeSnapshot(s: Snapshot): string {
  return stringifyJackson(snapshotToJson(s));
}

function reqNumber(o: JsonObject, k: string): number {
  const v = optNumber(o, k);
  if (v === undefined) throw new FormatError(`missing integer member "${k}"`);
  return v;
}

function optNumber(o: JsonObject, k: string): number | undefined {
  const v = o[k];
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'bigint') throw new FormatError(`member "${k}" = ${v} exceeds the supported range ±2^53`);
  throw new FormatError(`member "${k}" must be an integer`);
}

function reqBigint(o: JsonObject, k: string): bigint {
  const v = optBigint(o, k);
  if (v === undefined) throw new FormatError(`missing integer member "${k}"`);
  return v;
}

function optBigint(o: JsonObject, k: string): bigint | undefined {
  const v = o[k];
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  throw new FormatError(`member "${k}" must be an integer`);
}

function reqString(o: JsonObject, k: string): string {
  const v = optString(o, k);
  if (v === undefined) throw new FormatError(`missing string member "${k}"`);
  return v;
}

function optString(o: JsonObject, k: string): string | undefined {
  const v = o[k];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new FormatError(`member "${k}" must be a string`);
  return v;
}
