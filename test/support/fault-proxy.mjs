// An HTTP proxy in front of the S3 server that injects the faults of a bad network or an
// overloaded store, at a configurable rate: 503 SlowDown and 500 InternalError answers, connection
// resets before the request is forwarded and in the middle of the response body, truncated
// response bodies (the connection ends early), and latency spikes. Plain JavaScript so that the
// chaos harness (test/chaos/harness.mjs) can use it as well as the vitest suites.
//
// Requests go upstream with their headers unchanged (the SigV4 signature covers the Host header the
// client sent). Faults after forwarding make the outcome of a write ambiguous to the client, which
// is exactly what the storage layer must resolve.
import http from 'node:http';

/** @typedef {'slowdown' | 'internal' | 'reset-before' | 'reset-mid-body' | 'truncate-body' | 'latency'} FaultKind */
export const FAULT_KINDS = /** @type {const} */ (['slowdown', 'internal', 'reset-before', 'reset-mid-body', 'truncate-body', 'latency']);

export class FaultProxy {
  /**
   * @param {string} upstream S3 endpoint URL
   * @param {{ rate?: number, kinds?: readonly FaultKind[], seed?: number, latencyMs?: [number, number] }} [options]
   *   rate: probability that a request gets a fault (default 0.05); kinds: the faults to draw from.
   */
  constructor(upstream, options = {}) {
    this.upstream = new URL(upstream);
    this.rate = options.rate ?? 0.05;
    this.kinds = options.kinds ?? FAULT_KINDS;
    this.latencyMs = options.latencyMs ?? [200, 1200];
    let s = (options.seed ?? 1) >>> 0 || 1;
    /** xorshift32: reproducible fault sequences for a seed. */
    this.random = () => {
      s ^= s << 13;
      s >>>= 0;
      s ^= s >>> 17;
      s ^= s << 5;
      s >>>= 0;
      return s / 0x100000000;
    };
    /** @type {Record<string, number>} */
    this.injected = Object.fromEntries(FAULT_KINDS.map((k) => [k, 0]));
    this.requests = 0;
    /** While true, requests get no answer at all (a store that stopped answering); see stall(). */
    this.stalled = false;
    this.agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
    this.sockets = new Set();
    this.server = http.createServer((req, res) => this.handle(req, res));
    this.server.on('connection', (sock) => {
      this.sockets.add(sock);
      sock.on('close', () => this.sockets.delete(sock));
    });
  }

  /** Total faults injected so far. */
  get faults() {
    return Object.values(this.injected).reduce((a, b) => a + b, 0);
  }

  /** @returns {Promise<string>} the proxy's endpoint URL */
  async listen(port = 0) {
    await new Promise((resolve) => this.server.listen(port, '127.0.0.1', resolve));
    return `http://127.0.0.1:${this.server.address().port}`;
  }

  async close() {
    for (const s of this.sockets) s.destroy();
    this.agent.destroy();
    await new Promise((resolve) => this.server.close(() => resolve(undefined)));
  }

  /**
   * From now on, requests are never answered nor forwarded (a hung store or network): they wait
   * until close() destroys their connections.
   */
  stall() {
    this.stalled = true;
  }

  /** @returns {FaultKind | undefined} */
  draw() {
    if (this.rate <= 0 || this.random() >= this.rate) return undefined;
    return this.kinds[Math.floor(this.random() * this.kinds.length)];
  }

  handle(req, res) {
    this.requests++;
    if (this.stalled) return;
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('error', () => undefined);
    res.on('error', () => undefined);
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let fault = this.draw();
      if (fault !== undefined) this.injected[fault]++;
      if (fault === 'slowdown' || fault === 'internal') {
        const [status, code] = fault === 'slowdown' ? [503, 'SlowDown'] : [500, 'InternalError'];
        const xml = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>injected by FaultProxy</Message></Error>`;
        res.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(xml) });
        res.end(xml);
        return;
      }
      if (fault === 'reset-before') {
        req.socket.destroy();
        return;
      }
      const forward = () => {
        const up = http.request(
          {
            host: this.upstream.hostname,
            port: this.upstream.port,
            method: req.method,
            path: req.url,
            headers: req.headers,
            agent: this.agent,
          },
          (upRes) => {
            const upChunks = [];
            upRes.on('data', (c) => upChunks.push(c));
            upRes.on('error', () => req.socket.destroy());
            upRes.on('end', () => {
              const out = Buffer.concat(upChunks);
              // A body-less answer (PUT, DELETE, HEAD) cannot be cut: reset the connection instead.
              if ((fault === 'reset-mid-body' || fault === 'truncate-body') && out.length < 2) {
                req.socket.destroy();
                return;
              }
              res.writeHead(upRes.statusCode ?? 502, upRes.headers);
              if (fault === 'reset-mid-body') {
                res.write(out.subarray(0, out.length >> 1), () => req.socket.destroy());
                return;
              }
              if (fault === 'truncate-body') {
                // Part of the body, then a clean end of the connection: the client sees fewer bytes than Content-Length.
                res.write(out.subarray(0, Math.max(1, Math.floor(out.length * this.random()))), () => req.socket.end());
                return;
              }
              res.end(out);
            });
          },
        );
        up.on('error', () => req.socket.destroy());
        up.end(body);
      };
      if (fault === 'latency') {
        const [lo, hi] = this.latencyMs;
        setTimeout(forward, lo + Math.floor(this.random() * (hi - lo)));
      } else forward();
    });
  }
}
