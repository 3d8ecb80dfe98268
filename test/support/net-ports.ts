/** Ports for tests of connection failures. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A local port nothing listens on (bound, then released): connecting to it is refused. */
export async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
