import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { XMLParser } from 'fast-xml-parser';
import { StorageConfigError } from './errors.js';

/** Options of {@link S3FileIO}. Unset values are resolved by {@link resolveS3Config}. */
export interface S3Options {
  /** Endpoint URL, e.g. `http://127.0.0.1:7480`. Unset: AWS. */
  readonly endpoint?: string;
  readonly region?: string;
  readonly accessKeyId?: string;
  readonly secretAccessKey?: string;
  readonly sessionToken?: string;
  /** Path-style addressing (`endpoint/bucket/key`). Default: true for non-AWS endpoints. */
  readonly forcePathStyle?: boolean;
  /** Attempts per idempotent request, including the first (default 5). */
  readonly maxAttempts?: number;
  /** Objects at least this large are written with a multipart upload (default 16 MiB). */
  readonly multipartThreshold?: number;
  /** Multipart part size, at least 5 MiB (default 8 MiB). */
  readonly partSize?: number;
  /** Per-request timeout in milliseconds (default: none). */
  readonly requestTimeoutMs?: number;
  /**
   * `'probe'` (default): verify once per bucket/prefix that the store refuses a second
   * `If-None-Match: *` PUT before committing. `'skip'`: trust the store.
   */
  readonly conditionalWriteCheck?: 'probe' | 'skip';
  /** Path of a Hadoop `core-site.xml` to read `fs.s3a.*` settings from (default `$HADOOP_CONF_DIR/core-site.xml`). */
  readonly coreSiteXml?: string;
  /** Base delay of the jittered exponential retry backoff in milliseconds (default 100). */
  readonly retryBaseDelayMs?: number;
}

const MiB = 1024 * 1024;
/** Objects at least this large are uploaded in parts (16 MiB). */
export const DEFAULT_MULTIPART_THRESHOLD = 16 * MiB;
/** Part size of multipart uploads (8 MiB). */
export const DEFAULT_PART_SIZE = 8 * MiB;
/** S3's smallest allowed part size (5 MiB), except for the last part. */
export const MIN_PART_SIZE = 5 * MiB;
/** Attempts per S3 request, first try included, before a retryable error is given up on. */
export const DEFAULT_MAX_ATTEMPTS = 5;
/** Region used when no source names one (non-AWS endpoints ignore it). */
export const DEFAULT_REGION = 'us-east-1';

/** Where a setting came from, for {@link S3Config.describe}. */
export type S3SettingSource = 'options' | 'core-site.xml' | 'env' | 'default' | 'inferred';

interface Credentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

/** The non-secret settings of an {@link S3Config}. */
export interface S3ConfigFields {
  readonly endpoint: string | undefined;
  readonly region: string;
  readonly forcePathStyle: boolean;
  readonly maxAttempts: number;
  readonly multipartThreshold: number;
  readonly partSize: number;
  readonly requestTimeoutMs: number | undefined;
  readonly conditionalWriteCheck: 'probe' | 'skip';
  readonly retryBaseDelayMs: number;
  /** The option, variable or file key that named {@link endpoint} (for error messages), if any. */
  readonly endpointSetting: string | undefined;
  /** Where each setting came from. */
  readonly sources: Readonly<Record<string, S3SettingSource>>;
}

// The class carries exactly the fields of S3ConfigFields (copied in by the constructor); merging the
// interface declares them once instead of repeating every field in the class.
/** Fields of a resolved {@link S3Config} (declared once here, carried by the class). */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unsafe-declaration-merging
export interface S3Config extends S3ConfigFields {}

/** Fully resolved S3 settings. Secrets are held privately and never appear in `describe()`, `toString()`, JSON or `util.inspect`. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- see the interface above
export class S3Config {
  readonly #credentials: Credentials | undefined;

  /** @internal use {@link resolveS3Config}. */
  constructor(fields: S3ConfigFields, credentials: Credentials | undefined) {
    Object.assign(this, fields);
    this.#credentials = credentials;
  }

  /** Static credentials, or undefined to use the AWS SDK's default provider chain. */
  get credentials(): Credentials | undefined {
    return this.#credentials;
  }

  get accessKeyId(): string | undefined {
    return this.#credentials?.accessKeyId;
  }

  /** Identifies the service endpoint (for per-endpoint caches). */
  get endpointId(): string {
    return this.endpoint ?? `aws:${this.region}`;
  }

  /** A key that differs for any two configs that need different clients (secrets are hashed). */
  fingerprint(): string {
    const secretHash = createHash('sha256')
      .update(JSON.stringify([this.#credentials?.secretAccessKey ?? '', this.#credentials?.sessionToken ?? '']))
      .digest('hex');
    return JSON.stringify([
      this.endpoint ?? '',
      this.region,
      this.forcePathStyle,
      this.requestTimeoutMs ?? 0,
      this.#credentials?.accessKeyId ?? '',
      secretHash,
    ]);
  }

  /** Human-readable summary with secrets masked. */
  describe(): string {
    const c = this.#credentials;
    const parts = [
      `endpoint=${this.endpoint ?? '(AWS default)'}`,
      `region=${this.region}`,
      `forcePathStyle=${this.forcePathStyle}`,
      `accessKeyId=${c ? maskKeyId(c.accessKeyId) : '(SDK default chain)'}`,
      `secretAccessKey=${c ? '***' : '(unset)'}`,
      `sessionToken=${c?.sessionToken ? '***' : '(unset)'}`,
      `maxAttempts=${this.maxAttempts}`,
      `multipartThreshold=${this.multipartThreshold}`,
      `partSize=${this.partSize}`,
      `requestTimeoutMs=${this.requestTimeoutMs ?? '(none)'}`,
      `conditionalWriteCheck=${this.conditionalWriteCheck}`,
    ];
    return `S3Config(${parts.join(', ')})`;
  }

  toString(): string {
    return this.describe();
  }

  toJSON(): Record<string, unknown> {
    return {
      endpoint: this.endpoint,
      region: this.region,
      forcePathStyle: this.forcePathStyle,
      accessKeyId: this.#credentials ? maskKeyId(this.#credentials.accessKeyId) : undefined,
      secretAccessKey: this.#credentials ? '***' : undefined,
      sessionToken: this.#credentials?.sessionToken ? '***' : undefined,
      maxAttempts: this.maxAttempts,
      multipartThreshold: this.multipartThreshold,
      partSize: this.partSize,
      requestTimeoutMs: this.requestTimeoutMs,
      conditionalWriteCheck: this.conditionalWriteCheck,
    };
  }

  [inspect.custom](): string {
    return this.describe();
  }
}

/** Access key ids are not secret but still identify an account: show only a short prefix. */
function maskKeyId(id: string): string {
  return id.length <= 4 ? '***' : `${id.slice(0, 4)}***`;
}

/** `fs.s3a.*` settings read from a Hadoop core-site.xml. */
export function readCoreSiteXml(file: string): Map<string, string> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (cause) {
    throw new StorageConfigError(`Cannot read Hadoop configuration ${file}: ${(cause as Error).message}`, { cause });
  }
  let doc: unknown;
  try {
    const parser = new XMLParser({
      ignoreAttributes: true,
      parseTagValue: false,
      trimValues: true,
      isArray: (_name, jpath) => jpath === 'configuration.property',
    });
    doc = parser.parse(text, true);
  } catch (cause) {
    throw new StorageConfigError(`Hadoop configuration ${file} is not valid XML: ${(cause as Error).message}`, {
      cause,
    });
  }
  const props = (doc as { configuration?: { property?: unknown[] } })?.configuration?.property ?? [];
  const out = new Map<string, string>();
  for (const p of props) {
    if (typeof p !== 'object' || p === null) continue;
    const { name, value } = p as { name?: unknown; value?: unknown };
    if (typeof name !== 'string') continue;
    out.set(name.trim(), typeof value === 'string' ? value.trim() : value === undefined ? '' : String(value));
  }
  return out;
}

function parseBool(value: string, what: string): boolean {
  const v = value.trim().toLowerCase();
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw new StorageConfigError(`${what} must be true or false, got '${value}'`);
}

/**
 * The endpoint as a URL. `host:port` in fs.s3a.endpoint has no scheme; Hadoop picks it from
 * fs.s3a.connection.ssl.enabled (`sslEnabled`). Elsewhere (`sslEnabled` null) a missing scheme is
 * refused: the SDK would take it for https and fail with OpenSSL's text against a plain-HTTP server.
 */
function normalizeEndpoint(endpoint: string, sslEnabled: boolean | null, what: string): string {
  const hasScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint);
  if (!hasScheme && sslEnabled === null) {
    throw new StorageConfigError(`${what} = '${endpoint}' has no scheme: write http://${endpoint} (or https:// for TLS)`);
  }
  const withScheme = hasScheme ? endpoint : `${sslEnabled ? 'https' : 'http'}://${endpoint}`;
  try {
    new URL(withScheme);
  } catch {
    throw new StorageConfigError(`${what} is not a valid endpoint URL: '${endpoint}'`);
  }
  return withScheme.replace(/\/+$/, '');
}

/** True for AWS's own S3 endpoints (virtual-host style works there). */
export function isAwsEndpoint(endpoint: string): boolean {
  let host: string;
  try {
    host = new URL(endpoint).hostname.toLowerCase();
  } catch {
    return false;
  }
  return /(^|\.)amazonaws\.com(\.cn)?$/.test(host);
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function positiveInt(value: number | undefined, option: string, min = 1): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || value < min) {
    throw new StorageConfigError(`S3 option ${option} must be an integer >= ${min}, got ${value}`);
  }
  return value;
}

/**
 * Resolves S3 settings. Precedence, highest first: explicit `options`; a Hadoop core-site.xml
 * (`options.coreSiteXml`, else `$HADOOP_CONF_DIR/core-site.xml` if present; keys `fs.s3a.endpoint`,
 * `fs.s3a.access.key`, `fs.s3a.secret.key`, `fs.s3a.session.token`, `fs.s3a.path.style.access`,
 * `fs.s3a.endpoint.region`); then the environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
 * `AWS_SESSION_TOKEN`, `AWS_REGION`/`AWS_DEFAULT_REGION`, `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`,
 * `TIDEMARK_S3_SKIP_CONDITIONAL_CHECK=1`).
 *
 * Credentials are taken as a unit from the highest source that sets an access key; with none, the
 * AWS SDK's default provider chain applies. A non-AWS endpoint implies path-style addressing unless
 * `forcePathStyle` / `fs.s3a.path.style.access` says otherwise.
 *
 * @throws StorageConfigError naming the offending option, file or variable.
 */
export function resolveS3Config(options: S3Options = {}, env: NodeJS.ProcessEnv = process.env): S3Config {
  const sources: Record<string, S3SettingSource> = {};

  let site = new Map<string, string>();
  let siteFile: string | undefined;
  if (options.coreSiteXml !== undefined) {
    siteFile = options.coreSiteXml;
    site = readCoreSiteXml(siteFile);
  } else if (nonEmpty(env.HADOOP_CONF_DIR)) {
    const candidate = join(env.HADOOP_CONF_DIR!.trim(), 'core-site.xml');
    if (existsSync(candidate)) {
      siteFile = candidate;
      site = readCoreSiteXml(candidate);
    }
  }
  const siteGet = (key: string) => nonEmpty(site.get(key));
  const siteName = (key: string) => `${key} in ${siteFile}`;

  // Endpoint
  let endpoint: string | undefined;
  let endpointSetting: string | undefined;
  const sslEnabled = siteGet('fs.s3a.connection.ssl.enabled');
  if (nonEmpty(options.endpoint)) {
    endpoint = normalizeEndpoint(options.endpoint!.trim(), null, 'S3 option endpoint');
    [sources.endpoint, endpointSetting] = ['options', 'the S3 option endpoint'];
  } else if (siteGet('fs.s3a.endpoint')) {
    const ssl = sslEnabled === undefined ? true : parseBool(sslEnabled, siteName('fs.s3a.connection.ssl.enabled'));
    endpoint = normalizeEndpoint(siteGet('fs.s3a.endpoint')!, ssl, siteName('fs.s3a.endpoint'));
    [sources.endpoint, endpointSetting] = ['core-site.xml', siteName('fs.s3a.endpoint')];
  } else {
    for (const variable of ['AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL'] as const) {
      if (!nonEmpty(env[variable])) continue;
      endpoint = normalizeEndpoint(env[variable]!.trim(), null, variable);
      [sources.endpoint, endpointSetting] = ['env', variable];
      break;
    }
  }

  // Region
  let region: string;
  if (nonEmpty(options.region)) [region, sources.region] = [options.region!.trim(), 'options'];
  else if (siteGet('fs.s3a.endpoint.region')) [region, sources.region] = [siteGet('fs.s3a.endpoint.region')!, 'core-site.xml'];
  else if (nonEmpty(env.AWS_REGION)) [region, sources.region] = [env.AWS_REGION!.trim(), 'env'];
  else if (nonEmpty(env.AWS_DEFAULT_REGION)) [region, sources.region] = [env.AWS_DEFAULT_REGION!.trim(), 'env'];
  else [region, sources.region] = [DEFAULT_REGION, 'default'];

  // Path style
  let forcePathStyle: boolean;
  if (options.forcePathStyle !== undefined) [forcePathStyle, sources.forcePathStyle] = [options.forcePathStyle, 'options'];
  else if (siteGet('fs.s3a.path.style.access')) {
    forcePathStyle = parseBool(siteGet('fs.s3a.path.style.access')!, siteName('fs.s3a.path.style.access'));
    sources.forcePathStyle = 'core-site.xml';
  } else [forcePathStyle, sources.forcePathStyle] = [endpoint !== undefined && !isAwsEndpoint(endpoint), 'inferred'];

  // Credentials, as a unit from the highest source that names an access key.
  const credentialSources: Array<[S3SettingSource, string, string | undefined, string | undefined, string | undefined, string, string]> = [
    [
      'options',
      'S3 options',
      nonEmpty(options.accessKeyId),
      nonEmpty(options.secretAccessKey),
      nonEmpty(options.sessionToken),
      'accessKeyId',
      'secretAccessKey',
    ],
    [
      'core-site.xml',
      `${siteFile ?? 'core-site.xml'}`,
      siteGet('fs.s3a.access.key'),
      siteGet('fs.s3a.secret.key'),
      siteGet('fs.s3a.session.token'),
      'fs.s3a.access.key',
      'fs.s3a.secret.key',
    ],
    [
      'env',
      'the environment',
      nonEmpty(env.AWS_ACCESS_KEY_ID),
      nonEmpty(env.AWS_SECRET_ACCESS_KEY),
      nonEmpty(env.AWS_SESSION_TOKEN),
      'AWS_ACCESS_KEY_ID',
      'AWS_SECRET_ACCESS_KEY',
    ],
  ];
  let credentials: Credentials | undefined;
  for (const [source, where, keyId, secret, token, keyName, secretName] of credentialSources) {
    if (keyId === undefined && secret === undefined) continue;
    if (keyId === undefined) throw new StorageConfigError(`${secretName} is set in ${where} but ${keyName} is not`);
    if (secret === undefined) throw new StorageConfigError(`${keyName} is set in ${where} but ${secretName} is not`);
    credentials =
      token === undefined
        ? { accessKeyId: keyId, secretAccessKey: secret }
        : { accessKeyId: keyId, secretAccessKey: secret, sessionToken: token };
    sources.credentials = source;
    break;
  }

  let conditionalWriteCheck: 'probe' | 'skip';
  if (options.conditionalWriteCheck !== undefined) {
    if (options.conditionalWriteCheck !== 'probe' && options.conditionalWriteCheck !== 'skip') {
      throw new StorageConfigError(
        `S3 option conditionalWriteCheck must be 'probe' or 'skip', got '${String(options.conditionalWriteCheck)}'`,
      );
    }
    [conditionalWriteCheck, sources.conditionalWriteCheck] = [options.conditionalWriteCheck, 'options'];
  } else if (['1', 'true', 'yes'].includes((env.TIDEMARK_S3_SKIP_CONDITIONAL_CHECK ?? '').trim().toLowerCase())) {
    [conditionalWriteCheck, sources.conditionalWriteCheck] = ['skip', 'env'];
  } else [conditionalWriteCheck, sources.conditionalWriteCheck] = ['probe', 'default'];

  const partSize = positiveInt(options.partSize, 'partSize', MIN_PART_SIZE) ?? DEFAULT_PART_SIZE;
  const requestTimeoutMs = positiveInt(options.requestTimeoutMs, 'requestTimeoutMs');
  const retryBaseDelayMs = options.retryBaseDelayMs ?? 100;
  if (!Number.isFinite(retryBaseDelayMs) || retryBaseDelayMs < 0) {
    throw new StorageConfigError(`S3 option retryBaseDelayMs must be a number >= 0, got ${retryBaseDelayMs}`);
  }

  return new S3Config(
    {
      endpoint,
      region,
      forcePathStyle,
      maxAttempts: positiveInt(options.maxAttempts, 'maxAttempts') ?? DEFAULT_MAX_ATTEMPTS,
      multipartThreshold: positiveInt(options.multipartThreshold, 'multipartThreshold') ?? DEFAULT_MULTIPART_THRESHOLD,
      partSize,
      requestTimeoutMs,
      conditionalWriteCheck,
      retryBaseDelayMs,
      endpointSetting,
      sources,
    },
    credentials,
  );
}
