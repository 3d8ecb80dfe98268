/**
 * Partition directory names (`k=v/k2=v2/`), computed exactly as Java Paimon does, because readers
 * recompute data file paths from the manifest's partition row instead of listing directories.
 */
import { FormatError, SchemaError } from './errors.js';
import { javaDoubleToString, javaFloatToString } from './json.js';
import { typeToString } from './type-json.js';
import type { DataType } from './types.js';
import { decimalToPlainString, isDecimal, isTimestamp, type Timestamp, type Value } from './values.js';

/** Paimon's default value of `partition.default-name`. */
export const DEFAULT_PARTITION_NAME = '__DEFAULT_PARTITION__';

/** The table options that change how partition values are rendered. */
export interface PartitionPathOptions {
  /** Option `partition.legacy-name` (default true): Java `toString()` of internal values (DATE as epoch days). */
  readonly legacyName?: boolean;
  /** Option `partition.default-name`, used for null, empty or blank values. */
  readonly defaultName?: string;
}

/**
 * Relative partition directory, e.g. `dt=2024-01-01/hr=10/` (with trailing slash), or `''` for an
 * unpartitioned table.
 *
 * @throws SchemaError for partition types that have no stable string form (binary, nested).
 */
export function partitionPath(
  partitionKeys: readonly string[],
  types: readonly DataType[],
  values: readonly Value[],
  options: PartitionPathOptions = {},
): string {
  if (partitionKeys.length !== types.length || types.length !== values.length) {
    throw new FormatError(`partitionPath: ${partitionKeys.length} keys, ${types.length} types and ${values.length} values`);
  }
  const legacy = options.legacyName ?? true;
  const defaultName = options.defaultName ?? DEFAULT_PARTITION_NAME;
  let out = '';
  partitionKeys.forEach((key, i) => {
    const v = values[i] ?? null;
    let s = v === null ? null : partitionValueString(types[i] as DataType, v, legacy, key);
    if (s === null || s.trim() === '') s = defaultName;
    out += `${escapePathName(key)}=${escapePathName(s)}/`;
  });
  return out;
}

/**
 * The string form of each partition value as {@link partitionPath} renders it before escaping, but
 * with `null` for a null value instead of the default partition name: an empty or blank string
 * stays itself, so callers can tell `''` from NULL (both share the default partition directory).
 */
export function partitionValueStrings(
  partitionKeys: readonly string[],
  types: readonly DataType[],
  values: readonly Value[],
  options: Pick<PartitionPathOptions, 'legacyName'> = {},
): Array<string | null> {
  const legacy = options.legacyName ?? true;
  return partitionKeys.map((key, i) => {
    const v = values[i] ?? null;
    return v === null ? null : partitionValueString(types[i] as DataType, v, legacy, key);
  });
}

/**
 * Inverse of {@link partitionPath} for display: `[[key, value], ...]` with escapes undone. Values
 * stay strings (the default partition name is returned as is).
 */
export function parsePartitionPath(path: string): Array<[string, string]> {
  return path
    .split('/')
    .filter((seg) => seg !== '')
    .map((seg) => {
      const eq = seg.indexOf('=');
      if (eq <= 0) throw new FormatError(`'${seg}' in partition path '${path}' is not of the form key=value`);
      return [unescapePathName(seg.slice(0, eq)), unescapePathName(seg.slice(eq + 1))];
    });
}

const ESCAPED = new Set<number>([0x22, 0x23, 0x25, 0x27, 0x2a, 0x2f, 0x3a, 0x3d, 0x3f, 0x5c, 0x7f, 0x7b, 0x7d, 0x5b, 0x5d, 0x5e]);

/** Hive-style escaping of a path segment: control characters, DEL and the characters in `ESCAPED` become `%XX`. */
export function escapePathName(s: string): string {
  if (s === '') throw new FormatError('partition key or value must not be empty');
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || ESCAPED.has(c)) out += '%' + c.toString(16).toUpperCase().padStart(2, '0');
    else out += s[i];
  }
  return out;
}

/** Undoes {@link escapePathName} (`%XX` -> character; malformed escapes are kept literally). */
export function unescapePathName(s: string): string {
  return s.replace(/%([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

function partitionValueString(type: DataType, v: Value, legacy: boolean, key: string): string {
  const bad = (): never => {
    throw new FormatError(`partition '${key}': value does not match type ${typeToString(type)}`);
  };
  switch (type.root) {
    case 'BOOLEAN':
      return typeof v === 'boolean' ? String(v) : bad();
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT':
      return typeof v === 'number' && Number.isInteger(v) ? String(v) : bad();
    case 'BIGINT':
      return typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v)) ? String(v) : bad();
    case 'FLOAT':
      return typeof v === 'number' ? javaFloatToString(v) : bad();
    case 'DOUBLE':
      return typeof v === 'number' ? javaDoubleToString(v) : bad();
    case 'DECIMAL':
      return isDecimal(v) ? decimalToPlainString(v) : bad();
    case 'CHAR':
    case 'VARCHAR':
      return typeof v === 'string' ? v : bad();
    case 'DATE':
      if (typeof v !== 'number' || !Number.isInteger(v)) return bad();
      return legacy ? String(v) : formatDate(v);
    case 'TIME':
      if (typeof v !== 'number' || !Number.isInteger(v)) return bad();
      return legacy ? String(v) : formatTime(v, type.precision);
    case 'TIMESTAMP':
    case 'TIMESTAMP_LTZ':
      if (!isTimestamp(v)) return bad();
      return legacy ? localDateTimeToString(v) : formatSqlTimestamp(v, type.precision);
    default:
      throw new SchemaError(`partition '${key}': type ${typeToString(type)} cannot be a partition key`);
  }
}

const MS_PER_DAY = 86_400_000;

/** Java `LocalDate.toString()` of an epoch day: `yyyy-MM-dd`, `+yyyyy-…` beyond 9999, `-yyyy-…` before year 0. */
export function formatDate(epochDay: number): string {
  const d = new Date(epochDay * MS_PER_DAY);
  const y = d.getUTCFullYear();
  const ys = Math.abs(y) < 1000 ? (y < 0 ? '-' : '') + String(Math.abs(y)).padStart(4, '0') : y > 9999 ? `+${y}` : String(y);
  return `${ys}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}`;
}

/**
 * Java `LocalDateTime.toString()` of a timestamp: `2024-01-01T10:00`, seconds only when the
 * seconds or fraction are non-zero, fraction as 3, 6 or 9 digits.
 */
export function localDateTimeToString(t: Timestamp): string {
  const day = Math.floor(t.millis / MS_PER_DAY);
  const msOfDay = t.millis - day * MS_PER_DAY;
  const h = Math.floor(msOfDay / 3_600_000);
  const mi = Math.floor(msOfDay / 60_000) % 60;
  const s = Math.floor(msOfDay / 1000) % 60;
  const nanos = (msOfDay % 1000) * 1_000_000 + t.nanoOfMillis;
  let out = `${formatDate(day)}T${pad2(h)}:${pad2(mi)}`;
  if (s > 0 || nanos > 0) {
    out += `:${pad2(s)}`;
    if (nanos > 0) {
      if (nanos % 1_000_000 === 0) out += '.' + String(nanos / 1_000_000).padStart(3, '0');
      else if (nanos % 1000 === 0) out += '.' + String(nanos / 1000).padStart(6, '0');
      else out += '.' + String(nanos).padStart(9, '0');
    }
  }
  return out;
}

/** SQL CAST(ts AS STRING): `yyyy-MM-dd HH:mm:ss[.fff]`, fraction trimmed of zeros but kept to `precision` digits. */
function formatSqlTimestamp(t: Timestamp, precision: number): string {
  const day = Math.floor(t.millis / MS_PER_DAY);
  const msOfDay = t.millis - day * MS_PER_DAY;
  const nanos = (msOfDay % 1000) * 1_000_000 + t.nanoOfMillis;
  return `${formatDate(day)} ${hms(msOfDay)}${fraction(nanos, precision)}`;
}

/** SQL CAST(time AS STRING): `HH:mm:ss[.fff]`. */
function formatTime(millisOfDay: number, precision: number): string {
  return hms(millisOfDay) + fraction((millisOfDay % 1000) * 1_000_000, Math.min(precision, 3));
}

function hms(msOfDay: number): string {
  return `${pad2(Math.floor(msOfDay / 3_600_000))}:${pad2(Math.floor(msOfDay / 60_000) % 60)}:${pad2(Math.floor(msOfDay / 1000) % 60)}`;
}

function fraction(nanos: number, precision: number): string {
  let f = String(nanos).padStart(9, '0');
  while (f.length > precision && f.endsWith('0')) f = f.slice(0, -1);
  return f.length > 0 ? '.' + f : '';
}

function pad2(n: number): string {
  return String(n).padStart(2, '0');
}
