/**
 * Signed single-object S3 requests (GET, HEAD, PUT, DELETE of one key) and ListObjectsV2 pages,
 * sent straight over `node:http(s)`: the SigV4 signer of the AWS SDK (`@smithy/signature-v4`) and
 * the SDK's credential provider, without the SDK's middleware stack and response deserialisers. A
 * commit makes a few dozen of these small requests; through `S3Client.send` each cost about 2.5 ms
 * of CPU (middleware, endpoint rules, serde), over node:http about 0.5 ms, on a 2-core machine
 * where CPU is what bounds concurrent commits. Batch deletes and multipart uploads stay on the SDK
 * (rare, and each carries many keys or megabytes, so the SDK's cost per request hardly counts).
 *
 * Failures come back shaped as the SDK's (`name` = S3 error code, `$metadata.httpStatusCode`,
 * network errors with their `code`), so the caller's error classification serves both paths.
 */
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider, SourceData } from '@smithy/types';
import { XMLParser } from 'fast-xml-parser';
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';

/** A non-2xx answer, shaped like the SDK's service exceptions (`name`, `$metadata`). */
export class S3ResponseError extends Error {
  readonly $metadata: { readonly httpStatusCode: number };
  constructor(
    override readonly name: string,
    status: number,
    message: string,
  ) {
    super(message);
    this.$metadata = { httpStatusCode: status };
  }
}

/** A request that outlived `requestTimeoutMs`: retryable (and of unknown outcome), as the SDK's TimeoutError. */
class RequestTimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

export interface ObjectResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Uint8Array;
}

/** The SHA-256 of an empty payload (GET, HEAD, DELETE), as SigV4 wants it. */
const EMPTY_SHA256 = createHash('sha256').digest('hex');

/** node:crypto behind the signer's hash interface (what @smithy/hash-node does, without the extra package). */
class NodeSha256 {
  private readonly hash: Hash | Hmac;
  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytesOf(secret));
  }
  update(data: SourceData): void {
    this.hash.update(bytesOf(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }
}

function bytesOf(data: SourceData): string | Uint8Array {
  if (typeof data === 'string') return data;
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return new Uint8Array(data);
}

/** Error codes of the few reply bodies we read (errors only: success bodies are the object's bytes). */
const errorXml = new XMLParser({ ignoreDeclaration: true, parseTagValue: false });

/** One page of a listing. */
export interface ListPage {
  readonly contents: readonly { readonly key: string; readonly size: number; readonly lastModified: Date }[];
  readonly truncated: boolean;
  readonly nextToken: string | undefined;
}

interface RawListResult {
  Contents?: { Key?: unknown; Size?: unknown; LastModified?: unknown }[];
  IsTruncated?: unknown;
  NextContinuationToken?: unknown;
  EncodingType?: unknown;
}

/** Listing answers: every value kept as text (a key `007` stays a string), `Contents` always an array. */
const listXml = new XMLParser({
  ignoreDeclaration: true,
  parseTagValue: false,
  isArray: (name) => name === 'Contents' || name === 'CommonPrefixes',
});

/** A key of a listing requested with `encoding-type=url` ('+' is a space there; a literal '+' comes as %2B). */
function decodeListKey(encoded: string): string {
  return decodeURIComponent(encoded.replace(/\+/g, ' '));
}

/** S3's path escaping: every byte outside RFC 3986's unreserved set, except '/', percent-encoded. */
function escapeKey(key: string): string {
  return encodeURIComponent(key)
    .replace(/%2F/g, '/')
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function errorNameOf(status: number, method: string, body: Uint8Array): { name: string; message: string } {
  if (method !== 'HEAD' && body.length > 0) {
    try {
      const parsed = errorXml.parse(Buffer.from(body).toString('utf8')) as { Error?: { Code?: unknown; Message?: unknown } };
      const code = parsed.Error?.Code;
      if (typeof code === 'string' && code !== '') {
        const message = typeof parsed.Error?.Message === 'string' && parsed.Error.Message !== '' ? parsed.Error.Message : code;
        return { name: code, message };
      }
    } catch {
      // Not XML (a proxy's page): named by the status below.
    }
  }
  // HEAD answers carry no body; these are the names the SDK gives them.
  const byStatus: Record<number, string> = { 403: 'Forbidden', 404: 'NotFound', 412: 'PreconditionFailed', 501: 'NotImplemented' };
  const name = byStatus[status] ?? `HTTP${status}`;
  return { name, message: `${method} answered HTTP ${status}` };
}

/** Signed GET / HEAD / PUT / DELETE of one object on a path-style endpoint. */
export class S3ObjectRequests {
  private readonly signer: SignatureV4;
  private readonly agent: http.Agent;
  private readonly transport: typeof http | typeof https;
  private readonly host: string;
  private readonly hostname: string;
  private readonly port: number | undefined;
  private readonly basePath: string;

  /**
   * @param endpoint  path-style endpoint (`http://127.0.0.1:7480`); its path, if any, prefixes every key
   * @param credentials  the S3 client's resolved provider (static keys or the SDK's default chain)
   */
  constructor(
    endpoint: string,
    region: string,
    credentials: AwsCredentialIdentity | AwsCredentialIdentityProvider,
    private readonly timeoutMs: number | undefined,
  ) {
    const url = new URL(endpoint);
    this.transport = url.protocol === 'https:' ? https : http;
    this.agent = new this.transport.Agent({ keepAlive: true, maxSockets: 64 });
    this.host = url.host;
    this.hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
    this.port = url.port === '' ? undefined : Number(url.port);
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.signer = new SignatureV4({ credentials, region, service: 's3', sha256: NodeSha256, uriEscapePath: false, applyChecksum: true });
  }

  /**
   * Sends one request; resolves with any 2xx answer (and a 206 for ranges), rejects with an
   * {@link S3ResponseError} for other statuses and with the socket's error (its `code`) when the
   * connection fails or the body is cut short.
   */
  async send(
    method: 'GET' | 'HEAD' | 'PUT' | 'DELETE',
    bucket: string,
    key: string,
    headers: Record<string, string> = {},
    body?: Uint8Array,
    query: Record<string, string> = {},
  ): Promise<ObjectResponse> {
    const path = key === '' ? `${this.basePath}/${escapeKey(bucket)}` : `${this.basePath}/${escapeKey(bucket)}/${escapeKey(key)}`;
    const search = Object.keys(query)
      .sort()
      .map((k) => `${escapeKey(k)}=${escapeKey(query[k]!).replace(/\//g, '%2F')}`)
      .join('&');
    const all: Record<string, string> = {
      ...headers,
      host: this.host,
      'x-amz-content-sha256': body === undefined ? EMPTY_SHA256 : createHash('sha256').update(body).digest('hex'),
    };
    if (body !== undefined) all['content-length'] = String(body.length);
    const signed = await this.signer.sign({ method, protocol: '', hostname: this.hostname, path, headers: all, query });
    return new Promise<ObjectResponse>((resolve, reject) => {
      const req = this.transport.request(
        {
          agent: this.agent,
          method,
          host: this.hostname,
          ...(this.port === undefined ? {} : { port: this.port }),
          path: search === '' ? path : `${path}?${search}`,
          headers: signed.headers,
        },
        (resp) => {
          const chunks: Buffer[] = [];
          let length = 0;
          resp.on('data', (c: Buffer) => {
            chunks.push(c);
            length += c.length;
          });
          let ended = false;
          resp.on('error', reject);
          // A connection dropped mid-body: never hand out a short body (a no-op after 'end' or 'error').
          resp.on('close', () => {
            if (!ended)
              reject(Object.assign(new Error(`${method} s3://${bucket}/${key}: connection closed mid-response`), { code: 'ECONNRESET' }));
          });
          resp.on('end', () => {
            ended = true;
            // A plain Uint8Array that owns its bytes (Buffer.concat may hand out a view of a shared pool).
            const bytes = new Uint8Array(length);
            let at = 0;
            for (const c of chunks) {
              bytes.set(c, at);
              at += c.length;
            }
            const status = resp.statusCode ?? 0;
            if (status >= 200 && status < 300) resolve({ status, headers: resp.headers, body: bytes });
            else {
              const { name, message } = errorNameOf(status, method, bytes);
              reject(new S3ResponseError(name, status, message));
            }
          });
        },
      );
      req.on('error', reject);
      if (this.timeoutMs !== undefined) {
        const ms = this.timeoutMs;
        req.setTimeout(ms, () => req.destroy(new RequestTimeoutError(`${method} s3://${bucket}/${key} timed out after ${ms} ms`)));
      }
      req.end(body === undefined ? undefined : Buffer.from(body.buffer, body.byteOffset, body.length));
    });
  }

  /**
   * One page of ListObjectsV2 under `prefix` (keys requested URL-encoded, so that no XML
   * whitespace handling can alter a key).
   */
  async listPage(bucket: string, prefix: string, delimiter: string | undefined, token: string | undefined): Promise<ListPage> {
    const query: Record<string, string> = { 'list-type': '2', prefix, 'encoding-type': 'url' };
    if (delimiter !== undefined) query['delimiter'] = delimiter;
    if (token !== undefined) query['continuation-token'] = token;
    const resp = await this.send('GET', bucket, '', {}, undefined, query);
    const doc = listXml.parse(Buffer.from(resp.body).toString('utf8')) as { ListBucketResult?: RawListResult };
    const r = doc.ListBucketResult;
    if (r === undefined)
      throw Object.assign(new Error(`LIST s3://${bucket}/${prefix}: the answer is not a ListBucketResult`), { code: 'ECONNRESET' });
    // A store that ignores encoding-type says so by leaving EncodingType out: its keys are verbatim.
    const encoded = String(r.EncodingType ?? '') === 'url';
    const contents = (r.Contents ?? []).map((c) => ({
      key: encoded ? decodeListKey(String(c.Key ?? '')) : String(c.Key ?? ''),
      size: Number(c.Size ?? 0),
      lastModified: c.LastModified ? new Date(String(c.LastModified)) : new Date(0),
    }));
    const truncated = String(r.IsTruncated) === 'true';
    const next = r.NextContinuationToken === undefined ? undefined : String(r.NextContinuationToken);
    return { contents, truncated, nextToken: next };
  }

  /** Closes the idle keep-alive sockets (the process may exit). */
  destroy(): void {
    this.agent.destroy();
  }
}
