// An HTTP proxy in front of the S3 server, the base of the test proxies that change what the store
// answers (fault-proxy.mjs, and the lossy and If-None-Match-ignoring proxies of the storage and
// ingest suites): it reads each request's body and hands the request to `intercept`, whose default
// forwards it and relays the answer. Plain JavaScript so that the chaos harness can use it too.
//
// Requests go upstream with their headers unchanged: the SigV4 signature covers the Host header
// the client sent.
import http from 'node:http';

export class ForwardingProxy {
  /**
   * @param {string} upstream S3 endpoint URL
   * @param {http.AgentOptions} [agentOptions] of the keep-alive agent to the upstream
   */
  constructor(upstream, agentOptions = {}) {
    this.upstream = new URL(upstream);
    this.agent = new http.Agent({ keepAlive: true, ...agentOptions });
    this.sockets = new Set();
    this.server = http.createServer((req, res) => this.handle(req, res));
    this.server.on('connection', (sock) => {
      this.sockets.add(sock);
      sock.on('close', () => this.sockets.delete(sock));
    });
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

  /** Reads the request's body, then passes the request on to {@link intercept}. */
  handle(req, res) {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('error', () => undefined);
    res.on('error', () => undefined);
    req.on('end', () => this.intercept(req, res, Buffer.concat(chunks)));
  }

  /** What the proxy does with a request (default: forwards it and relays the answer). */
  intercept(req, res, body) {
    this.forward(req, body, (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      upRes.pipe(res);
    });
  }

  /** Sends the request upstream; `onResponse` gets the answer. An upstream error resets the client's connection. */
  forward(req, body, onResponse) {
    const up = http.request(
      {
        host: this.upstream.hostname,
        port: this.upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
        agent: this.agent,
      },
      onResponse,
    );
    up.on('error', () => req.socket.destroy());
    up.end(body);
  }
}
