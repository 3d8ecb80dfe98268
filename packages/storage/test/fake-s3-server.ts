import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A tiny in-process S3 look-alike (path-style) for unit tests of S3FileIO's request logic and
 * failure handling. Not a conformance target: integration tests use a real S3 server.
 */
export interface Fault {
  /** Which request to hit, e.g. `(r) => r.method === 'PUT'`. */
  match: (r: RecordedRequest) => boolean;
  /**
   * `status`: answer with an error without applying the request. `apply-then-status`: apply it,
   * then answer with an error. `reset` / `apply-then-reset`: the same, but drop the connection.
   */
  kind: 'status' | 'apply-then-status' | 'reset' | 'apply-then-reset';
  status?: number;
  code?: string;
}

export interface RecordedRequest {
  method: string;
  bucket: string;
  key: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  bodyLength: number;
}

interface StoredObject {
  data: Buffer;
  lastModified: Date;
}

const xml = (body: string) => `<?xml version="1.0" encoding="UTF-8"?>\n${body}`;
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export class FakeS3Server {
  readonly objects = new Map<string, StoredObject>(); // "bucket/key"
  readonly requests: RecordedRequest[] = [];
  readonly faults: Fault[] = [];
  /** When false, PUT If-None-Match: * is ignored (like s3rver). */
  honourIfNoneMatch = true;
  /** Keys per ListObjectsV2 page. */
  pageSize = 1000;
  /** Milliseconds to hold the reply of a request (after applying it); null answers at once. */
  replyDelay: ((r: RecordedRequest) => number) | null = null;
  /** Called when a reply is sent (after any delay). */
  onReply: ((r: RecordedRequest) => void) | null = null;
  /** Keys whose DeleteObjects entry reports AccessDenied. */
  readonly undeletable = new Set<string>();
  private readonly uploads = new Map<string, Map<number, Buffer>>();
  private uploadSeq = 0;
  private server: Server | undefined;
  endpoint = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => this.handle(req, res, Buffer.concat(chunks)));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.endpoint = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  put(bucket: string, key: string, data: string | Buffer): void {
    this.objects.set(`${bucket}/${key}`, { data: Buffer.from(data), lastModified: new Date() });
  }

  get(bucket: string, key: string): string | undefined {
    return this.objects.get(`${bucket}/${key}`)?.data.toString();
  }

  private handle(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://x');
    const [, bucket = '', ...rest] = url.pathname.split('/');
    const key = decodeURIComponent(rest.join('/'));
    const rec: RecordedRequest = {
      method: req.method ?? '',
      bucket,
      key,
      query: url.searchParams,
      headers: req.headers,
      bodyLength: body.length,
    };
    this.requests.push(rec);
    const faultIndex = this.faults.findIndex((f) => f.match(rec));
    const fault = faultIndex >= 0 ? this.faults.splice(faultIndex, 1)[0] : undefined;
    if (fault?.kind === 'reset') {
      req.socket.destroy();
      return;
    }
    if (fault?.kind === 'status') {
      this.error(res, fault.status ?? 500, fault.code ?? 'InternalError');
      return;
    }
    const reply = this.apply(rec, body);
    if (fault?.kind === 'apply-then-reset') {
      req.socket.destroy();
      return;
    }
    if (fault?.kind === 'apply-then-status') {
      this.error(res, fault.status ?? 500, fault.code ?? 'InternalError');
      return;
    }
    const delay = this.replyDelay?.(rec) ?? 0;
    const send = (): void => {
      this.onReply?.(rec);
      reply(res);
    };
    if (delay > 0) setTimeout(send, delay);
    else send();
  }

  private error(res: ServerResponse, status: number, code: string): void {
    res.writeHead(status, { 'content-type': 'application/xml' });
    res.end(xml(`<Error><Code>${code}</Code><Message>${code}</Message></Error>`));
  }

  /** Applies the request to the store and returns how to answer it. */
  private apply(r: RecordedRequest, body: Buffer): (res: ServerResponse) => void {
    const id = `${r.bucket}/${r.key}`;
    const q = r.query;
    if (r.method === 'POST' && q.has('delete')) {
      const keys = [...body.toString().matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]!);
      const errors: string[] = [];
      for (const k of keys) {
        if (this.undeletable.has(k))
          errors.push(`<Error><Key>${esc(k)}</Key><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`);
        else this.objects.delete(`${r.bucket}/${k}`);
      }
      return (res) => {
        res.writeHead(200, { 'content-type': 'application/xml' });
        res.end(xml(`<DeleteResult>${errors.join('')}</DeleteResult>`));
      };
    }
    if (r.method === 'POST' && q.has('uploads')) {
      const uploadId = `upload-${++this.uploadSeq}`;
      this.uploads.set(uploadId, new Map());
      return (res) => {
        res.writeHead(200, { 'content-type': 'application/xml' });
        res.end(
          xml(
            `<InitiateMultipartUploadResult><Bucket>${r.bucket}</Bucket><Key>${esc(r.key)}</Key><UploadId>${uploadId}</UploadId></InitiateMultipartUploadResult>`,
          ),
        );
      };
    }
    if (r.method === 'PUT' && q.has('uploadId')) {
      const parts = this.uploads.get(q.get('uploadId')!);
      if (!parts) return (res) => this.error(res, 404, 'NoSuchUpload');
      const n = Number(q.get('partNumber'));
      parts.set(n, body);
      return (res) => {
        res.writeHead(200, { etag: `"part-${n}"` });
        res.end();
      };
    }
    if (r.method === 'POST' && q.has('uploadId')) {
      const parts = this.uploads.get(q.get('uploadId')!);
      if (!parts) return (res) => this.error(res, 404, 'NoSuchUpload');
      const order = [...body.toString().matchAll(/<PartNumber>(\d+)<\/PartNumber>/g)].map((m) => Number(m[1]));
      this.objects.set(id, { data: Buffer.concat(order.map((n) => parts.get(n)!)), lastModified: new Date() });
      this.uploads.delete(q.get('uploadId')!);
      return (res) => {
        res.writeHead(200, { 'content-type': 'application/xml' });
        res.end(
          xml(
            `<CompleteMultipartUploadResult><Bucket>${r.bucket}</Bucket><Key>${esc(r.key)}</Key><ETag></ETag></CompleteMultipartUploadResult>`,
          ),
        );
      };
    }
    if (r.method === 'DELETE' && q.has('uploadId')) {
      this.uploads.delete(q.get('uploadId')!);
      return (res) => {
        res.writeHead(204);
        res.end();
      };
    }
    if (r.method === 'GET' && r.key === '' && q.get('list-type') === '2') return this.list(r);
    if (r.method === 'PUT') {
      if (this.honourIfNoneMatch && r.headers['if-none-match'] === '*' && this.objects.has(id)) {
        return (res) => this.error(res, 412, 'PreconditionFailed');
      }
      this.objects.set(id, { data: body, lastModified: new Date() });
      return (res) => {
        res.writeHead(200, { etag: '"e"' });
        res.end();
      };
    }
    if (r.method === 'DELETE') {
      this.objects.delete(id);
      return (res) => {
        res.writeHead(204);
        res.end();
      };
    }
    if (r.method === 'GET' || r.method === 'HEAD') {
      const obj = this.objects.get(id);
      if (!obj) {
        return (res) => (r.method === 'HEAD' ? (res.writeHead(404), res.end()) : this.error(res, 404, 'NoSuchKey'));
      }
      const headers = { 'last-modified': obj.lastModified.toUTCString(), etag: '"e"' };
      const range = /^bytes=(\d+)-(\d+)$/.exec(String(r.headers.range ?? ''));
      if (r.method === 'GET' && range) {
        const start = Number(range[1]);
        const end = Math.min(Number(range[2]), obj.data.length - 1);
        if (start >= obj.data.length) return (res) => this.error(res, 416, 'InvalidRange');
        const slice = obj.data.subarray(start, end + 1);
        return (res) => {
          res.writeHead(206, { ...headers, 'content-length': slice.length, 'content-range': `bytes ${start}-${end}/${obj.data.length}` });
          res.end(slice);
        };
      }
      return (res) => {
        res.writeHead(200, { ...headers, 'content-length': obj.data.length });
        res.end(r.method === 'HEAD' ? undefined : obj.data);
      };
    }
    return (res) => this.error(res, 400, 'NotSupportedByFake');
  }

  private list(r: RecordedRequest): (res: ServerResponse) => void {
    const prefix = r.query.get('prefix') ?? '';
    const delimiter = r.query.get('delimiter');
    const after = r.query.get('continuation-token') ?? '';
    const keys = [...this.objects.keys()]
      .filter((id) => id.startsWith(`${r.bucket}/`))
      .map((id) => id.slice(r.bucket.length + 1))
      .filter((k) => k.startsWith(prefix) && k > after)
      .sort();
    const contents: string[] = [];
    const prefixes = new Set<string>();
    let last = '';
    let truncated = false;
    for (const k of keys) {
      if (contents.length + prefixes.size >= this.pageSize) {
        truncated = true;
        break;
      }
      last = k;
      const rest = k.slice(prefix.length);
      if (delimiter && rest.includes(delimiter)) {
        prefixes.add(prefix + rest.slice(0, rest.indexOf(delimiter) + 1));
        continue;
      }
      const obj = this.objects.get(`${r.bucket}/${k}`)!;
      contents.push(
        `<Contents><Key>${esc(k)}</Key><LastModified>${obj.lastModified.toISOString()}</LastModified><ETag>"e"</ETag><Size>${obj.data.length}</Size><StorageClass>STANDARD</StorageClass></Contents>`,
      );
    }
    const cps = [...prefixes].map((p) => `<CommonPrefixes><Prefix>${esc(p)}</Prefix></CommonPrefixes>`).join('');
    return (res) => {
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end(
        xml(
          `<ListBucketResult><Name>${r.bucket}</Name><Prefix>${esc(prefix)}</Prefix><KeyCount>${contents.length}</KeyCount><MaxKeys>${this.pageSize}</MaxKeys><IsTruncated>${truncated}</IsTruncated>${contents.join('')}${cps}` +
            (truncated ? `<NextContinuationToken>${esc(last)}</NextContinuationToken>` : '') +
            `</ListBucketResult>`,
        ),
      );
    };
  }
}
