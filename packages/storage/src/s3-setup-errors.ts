/**
 * S3 failures that mean the settings are wrong rather than the store or the network misbehaving:
 * no credentials anywhere, nothing listening at the endpoint, a host name that does not resolve,
 * TLS spoken to a plain-HTTP server. They become {@link StorageConfigError}s (user errors) naming
 * the variable to set or the endpoint tried and where it came from, instead of the SDK's or
 * OpenSSL's text.
 */
import { StorageConfigError } from './errors.js';
import type { S3Config } from './s3-config.js';

interface ErrorShape {
  readonly name?: string;
  readonly code?: string;
  readonly message?: string;
  readonly cause?: unknown;
}

/** The error and its causes, outermost first (the SDK wraps socket errors). */
function chain(err: unknown): ErrorShape[] {
  const out: ErrorShape[] = [];
  for (let e = err; typeof e === 'object' && e !== null && out.length < 5; e = (e as ErrorShape).cause) out.push(e as ErrorShape);
  return out;
}

/** Which endpoint a request went to, and what set it. */
function endpointOf(config: S3Config): string {
  return config.endpoint === undefined
    ? `AWS S3 in region ${config.region} (no endpoint is set: for another S3 server set AWS_ENDPOINT_URL_S3)`
    : `the S3 endpoint ${config.endpoint}${config.endpointSetting === undefined ? '' : ` (from ${config.endpointSetting})`}`;
}

/** A {@link StorageConfigError} for a setup mistake behind `err`, or undefined when it is something else. */
export function s3SetupError(err: unknown, config: S3Config): StorageConfigError | undefined {
  const errors = chain(err);
  const has = (test: (e: ErrorShape) => boolean): boolean => errors.some(test);
  if (has((e) => e.name === 'CredentialsProviderError')) {
    return new StorageConfigError(
      'no S3 credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, or fs.s3a.access.key and ' +
        'fs.s3a.secret.key in core-site.xml)',
      { cause: err },
    );
  }
  const where = endpointOf(config);
  if (has((e) => e.code === 'ECONNREFUSED')) {
    return new StorageConfigError(`cannot connect to ${where}: connection refused; is the server running, and is that its address?`, {
      cause: err,
    });
  }
  if (has((e) => e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN')) {
    return new StorageConfigError(`cannot connect to ${where}: its host name does not resolve`, { cause: err });
  }
  const notTls = (e: ErrorShape): boolean =>
    e.code === 'EPROTO' ||
    e.code === 'ERR_SSL_WRONG_VERSION_NUMBER' ||
    /wrong version number|packet length too long/i.test(e.message ?? '');
  if (config.endpoint !== undefined && config.endpoint.startsWith('https://') && has(notTls)) {
    return new StorageConfigError(
      `${where} does not answer TLS: use ${config.endpoint.replace(/^https:/, 'http:')} if the server speaks plain HTTP`,
      { cause: err },
    );
  }
  return undefined;
}
