/** Types of forwarding-proxy.mjs (plain JavaScript so that the chaos harness can load it). */
import type http from 'node:http';

export declare class ForwardingProxy {
  constructor(upstream: string, agentOptions?: http.AgentOptions);
  listen(port?: number): Promise<string>;
  close(): Promise<void>;
  /** What the proxy does with a request whose body was read (default: forwards it and relays the answer). */
  protected intercept(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer): void;
  /** Sends the request upstream; an upstream error resets the client's connection. */
  protected forward(req: http.IncomingMessage, body: Buffer, onResponse: (upRes: http.IncomingMessage) => void): void;
  protected handle(req: http.IncomingMessage, res: http.ServerResponse): void;
}
