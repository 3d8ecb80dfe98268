import { fileURLToPath } from 'node:url';
import { StorageConfigError } from './errors.js';

/** The backends a location can address. */
export type LocationScheme = 'file' | 's3' | 'memory';

/** A location split into its parts. */
export interface ParsedLocation {
  readonly scheme: LocationScheme;
  /** S3 bucket, or the store name of a `memory://` location. */
  readonly bucket?: string;
  /** Object key inside the bucket / memory store, without a leading slash (may be ''). */
  readonly key?: string;
  /** Local file-system path (for plain paths and `file://` URIs). */
  readonly path?: string;
}

const SCHEME_RE = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//;
/** A scheme tidemark reads, written without its `//` (`s3:bucket/key`). */
const SLASHLESS_RE = /^(s3a?|memory):(?!\/\/)/i;

/** Splits `scheme://authority/rest` or a plain path into a prefix that must be kept verbatim and a path part. */
function splitPrefix(location: string): { prefix: string; rest: string } {
  const m = SCHEME_RE.exec(location);
  if (!m) return { prefix: '', rest: location };
  const scheme = m[1]!.toLowerCase();
  const afterScheme = location.slice(m[0].length);
  if (scheme === 'file') {
    // file:///abs/path keeps the third slash as the start of the path.
    return { prefix: location.slice(0, m[0].length), rest: afterScheme };
  }
  const slash = afterScheme.indexOf('/');
  const authority = slash < 0 ? afterScheme : afterScheme.slice(0, slash);
  const rest = slash < 0 ? '' : afterScheme.slice(slash);
  return { prefix: location.slice(0, m[0].length) + authority, rest };
}

function encodeFileSegment(segment: string): string {
  return segment.replace(/[%#?]/g, (c) => encodeURIComponent(c));
}

/**
 * Joins a base location with child parts: `joinPath('s3://b/wh', 'db.db', 't')` →
 * `s3://b/wh/db.db/t`. Works for plain paths, `file://`, `s3://` and `memory://` locations; keeps
 * the scheme and authority, never produces double slashes, and ignores empty parts. Parts may
 * themselves contain slashes (`'snapshot/snapshot-1'`). Parts appended to a `file://` URI have
 * `%`, `#` and `?` percent-encoded, so they name the literal file.
 */
export function joinPath(base: string, ...parts: string[]): string {
  const { prefix, rest } = splitPrefix(base);
  // A file:// location is a real URI: escape what fileURLToPath would otherwise decode or cut off
  // (Paimon partition directories contain '%'), so parseLocation gives back the literal name.
  const encode = prefix.toLowerCase().startsWith('file:') ? encodeFileSegment : (seg: string) => seg;
  const segments = rest.split('/').filter((seg) => seg !== '');
  for (const part of parts) {
    for (const seg of part.split('/')) if (seg !== '') segments.push(encode(seg));
  }
  const joined = segments.join('/');
  if (prefix !== '') return joined === '' ? prefix : `${prefix}/${joined}`;
  if (rest.startsWith('/')) return `/${joined}`;
  return joined === '' ? '.' : joined;
}

/**
 * Parses a location into scheme and parts. Plain paths and `file://` URIs give `{ scheme: 'file', path }`;
 * `s3://bucket/key` (or `s3a://`) gives `{ scheme: 's3', bucket, key }`; `memory://name/key` gives
 * `{ scheme: 'memory', bucket: name, key }`.
 *
 * @throws StorageConfigError for an unsupported scheme, a known scheme without `//` (`s3:bucket/key`),
 *   or an S3/memory location without a bucket/name.
 */
export function parseLocation(uri: string): ParsedLocation {
  const m = SCHEME_RE.exec(uri);
  if (!m) {
    if (uri === '') throw new StorageConfigError('Empty location: expected a path or a file://, s3:// or memory:// URI');
    const slashless = SLASHLESS_RE.exec(uri);
    if (slashless) {
      // `s3:bucket/path` would otherwise write to a local directory named `s3:bucket`.
      const meant = `${slashless[1]!.toLowerCase()}://${uri.slice(slashless[0].length).replace(/^\/+/, '')}`;
      throw new StorageConfigError(
        `Location ${uri} is not a valid location: write ${meant}, or ./${uri} for a local directory of that name`,
      );
    }
    return { scheme: 'file', path: uri };
  }
  const raw = m[1]!.toLowerCase();
  // Hadoop, Flink and Spark configurations name S3 `s3a://`: the same objects.
  const scheme = raw === 's3a' ? 's3' : raw;
  if (scheme === 'file') {
    let path: string;
    try {
      path = fileURLToPath(uri);
    } catch (cause) {
      throw new StorageConfigError(`Invalid file URI: ${uri}`, { cause });
    }
    return { scheme: 'file', path };
  }
  if (scheme === 's3' || scheme === 'memory') {
    const afterScheme = uri.slice(m[0].length);
    const slash = afterScheme.indexOf('/');
    const bucket = slash < 0 ? afterScheme : afterScheme.slice(0, slash);
    const key = slash < 0 ? '' : afterScheme.slice(slash + 1).replace(/^\/+/, '');
    if (bucket === '') {
      throw new StorageConfigError(
        `Location ${uri} has no ${scheme === 's3' ? 'bucket' : 'store name'}: expected ${raw}://<${scheme === 's3' ? 'bucket' : 'name'}>/<key>`,
      );
    }
    return { scheme, bucket, key };
  }
  throw new StorageConfigError(
    `Unsupported location scheme '${raw}://' in ${uri}: expected a plain path, file://, s3:// (or s3a://) or memory://`,
  );
}
