/**
 * The HTTP endpoints of a pipeline run as a service: `/metrics` (Prometheus text format),
 * `/healthz` (liveness) and `/readyz` (readiness), both JSON with status 200 or 503.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SinkUsageError } from './errors.js';
import type { IngestMetrics } from './ingest-metrics.js';

/** Where {@link startMetricsServer} listens. */
export interface MetricsServerOptions {
  /** TCP port; 0 picks a free one (see {@link MetricsServer.port}). */
  readonly port: number;
  /** Interface to listen on (default: every interface, as a scraper on another host needs). */
  readonly host?: string;
}

/** A running metrics server. */
export interface MetricsServer {
  /** The port it listens on. */
  readonly port: number;
  /** Its base URL, e.g. `http://localhost:9464`. */
  readonly url: string;
  /** Stops listening and closes every open connection (a scraper's keep-alive one too). */
  close(): Promise<void>;
}

/**
 * Serves `metrics` over HTTP. The server does not keep the process alive by itself (it and its
 * connections are unref'd): a pipeline that ended lets the process exit even if nobody calls `close`.
 *
 * @throws SinkUsageError when the port cannot be listened on (in use, not permitted).
 */
export async function startMetricsServer(metrics: IngestMetrics, options: MetricsServerOptions): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    respond(metrics, req, res).catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`metrics failed: ${e instanceof Error ? e.message : String(e)}\n`);
    });
  });
  // Neither the listening socket nor a scraper's keep-alive connection holds the process open.
  server.on('connection', (socket) => socket.unref());
  await listen(server, options);
  server.unref();
  const address = server.address() as AddressInfo;
  const host = options.host === undefined || address.address === '::' || address.address === '0.0.0.0' ? 'localhost' : options.host;
  return {
    port: address.port,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function listen(server: Server, options: MetricsServerOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (e: NodeJS.ErrnoException): void => {
      const why = e.code === 'EADDRINUSE' ? 'the address is in use' : e.code === 'EACCES' ? 'permission denied' : e.message;
      reject(new SinkUsageError(`cannot serve metrics on ${options.host ?? '*'}:${options.port}: ${why}`, { cause: e }));
    };
    server.once('error', onError);
    server.listen(options.port, options.host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

async function respond(metrics: IngestMetrics, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD' }).end();
    return;
  }
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  if (path === '/metrics') {
    const body = await metrics.registry.metrics();
    res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(req.method === 'HEAD' ? undefined : body);
    return;
  }
  if (path === '/healthz' || path === '/readyz') {
    const health = metrics.health();
    const ok = path === '/healthz' ? health.live : health.ready;
    res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' }).end(req.method === 'HEAD' ? undefined : JSON.stringify(health));
    return;
  }
  res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found; try /metrics, /healthz or /readyz\n');
}
