/**
 * `ingest --source kafka://...`: the client settings reach the wire. A Kafka broker of a few
 * requests (ApiVersions, SaslHandshake, SaslAuthenticate) behind TLS that asks for a client
 * certificate records what the client presented: the certificate of `--kafka-cert`/`--kafka-key`
 * (the key encrypted, its passphrase from TIDEMARK_KAFKA_KEY_PASSPHRASE), trust in `--kafka-ca`,
 * the client id, and the SASL PLAIN user and password (SCRAM's mechanism and user); then it refuses the credentials, and the
 * run fails with an error that says so and shows neither the password nor the passphrase. The same
 * from `TIDEMARK_KAFKA_*` variables alone, and a flag wins over its variable. Needs `openssl`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/index.js';
import { MemoryStream } from './helpers.js';

const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
if (!hasOpenssl) console.warn('[tidemark] SKIPPED Kafka client settings tests: openssl is not installed (it makes the test certificates)');

/** What one connection of the client showed the broker. */
interface Seen {
  authorized: boolean;
  clientCertCN: string | undefined;
  clientIds: string[];
  mechanism?: string;
  user?: string;
  password?: string;
}

const API_VERSIONS = 18;
const SASL_HANDSHAKE = 17;
const SASL_AUTHENTICATE = 36;
const SASL_AUTHENTICATION_FAILED = 58;

function int16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeInt16BE(n);
  return b;
}
function int32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
}
function str(s: string): Buffer {
  return Buffer.concat([int16(Buffer.byteLength(s)), Buffer.from(s)]);
}

/** The response body to one request (`null`: an API this broker does not speak, so it hangs up). */
function answer(apiKey: number, body: Buffer, seen: Seen): Buffer | null {
  if (apiKey === API_VERSIONS) {
    // v0..v2: error, [key min max], and (v1+) throttle time; kafkajs asks v2 first.
    const apis = [
      [SASL_HANDSHAKE, 0, 1],
      [SASL_AUTHENTICATE, 0, 0],
      [API_VERSIONS, 0, 2],
    ];
    return Buffer.concat([int16(0), int32(apis.length), ...apis.flatMap((a) => a.map(int16)), int32(0)]);
  }
  if (apiKey === SASL_HANDSHAKE) {
    seen.mechanism = body.subarray(2, 2 + body.readInt16BE(0)).toString();
    // Whatever the client asks for is enabled.
    return Buffer.concat([int16(0), int32(1), str(seen.mechanism)]);
  }
  if (apiKey === SASL_AUTHENTICATE) {
    const auth = body.subarray(4, 4 + body.readInt32BE(0)).toString();
    if (seen.mechanism === 'PLAIN') {
      // authzid \0 user \0 password.
      [, seen.user, seen.password] = auth.split('\0');
    } else {
      // SCRAM's client-first message: n,,n=<user>,r=<nonce> (the password never crosses the wire).
      seen.user = /^n,,n=([^,]*),r=/.exec(auth)?.[1];
    }
    return Buffer.concat([int16(SASL_AUTHENTICATION_FAILED), str('Authentication failed: invalid credentials'), int32(0)]);
  }
  return null;
}

/** A TLS listener that requires a client certificate signed by `ca` and speaks the requests above. */
async function saslBroker(tls: { key: string; cert: string; ca: string }): Promise<{ server: Server; port: number; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer({ ...tls, requestCert: true, rejectUnauthorized: true }, (socket: TLSSocket) => {
    const s: Seen = {
      authorized: socket.authorized,
      clientCertCN: socket.getPeerCertificate().subject?.CN as string | undefined,
      clientIds: [],
    };
    seen.push(s);
    let buf = Buffer.alloc(0);
    socket.on('error', () => undefined);
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 4 && buf.length >= 4 + buf.readInt32BE(0)) {
        const req = buf.subarray(4, 4 + buf.readInt32BE(0));
        buf = buf.subarray(4 + req.length);
        // Header v1: api key, api version, correlation id, client id.
        const apiKey = req.readInt16BE(0);
        const correlationId = req.readInt32BE(4);
        const idLength = req.readInt16BE(8);
        s.clientIds.push(req.subarray(10, 10 + idLength).toString());
        const body = answer(apiKey, req.subarray(10 + idLength), s);
        if (body === null) {
          socket.destroy();
          return;
        }
        socket.write(Buffer.concat([int32(4 + body.length), int32(correlationId), body]));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port, seen };
}

function openssl(dir: string, ...args: string[]): void {
  const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${r.stderr}`);
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
const PASSPHRASE = 'key-Passphrase-7f3';
const PASSWORD = 'pa55-Wire-Secret';

describe.skipIf(!hasOpenssl)('ingest --source kafka://: TLS and SASL settings reach the client', { timeout: 120_000 }, () => {
  let dir: string;
  let broker: Awaited<ReturnType<typeof saslBroker>>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tidemark-kafka-client-'));
    // A CA, the broker's certificate for 127.0.0.1, and a client certificate with an encrypted key.
    openssl(dir, 'req', '-x509', ...EC, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=test-ca');
    openssl(dir, 'req', ...EC, '-keyout', 'broker.key', '-out', 'broker.csr', '-subj', '/CN=127.0.0.1');
    await writeFile(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1\n');
    const sign = (csr: string, out: string, ...extra: string[]): void =>
      openssl(dir, 'x509', '-req', '-in', csr, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', out, '-days', '2', ...extra);
    sign('broker.csr', 'broker.pem', '-extfile', 'ext.cnf');
    openssl(dir, 'req', ...EC, '-keyout', 'client-plain.key', '-out', 'client.csr', '-subj', '/CN=ingest-client');
    sign('client.csr', 'client.pem');
    openssl(dir, 'pkey', '-in', 'client-plain.key', '-aes256', '-passout', `pass:${PASSPHRASE}`, '-out', 'client.key');
    await writeFile(join(dir, 'password'), `${PASSWORD}\n`);
    const read = (f: string) => readFile(join(dir, f), 'utf8');
    broker = await saslBroker({ key: await read('broker.key'), cert: await read('broker.pem'), ca: await read('ca.pem') });
    const schema = JSON.stringify([{ name: 'id', type: 'BIGINT NOT NULL' }]);
    expect((await run(['create', 't', '--schema', schema], {})).code).toBe(0);
  });
  afterAll(async () => {
    await new Promise((resolve) => broker?.server.close(resolve));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function run(argv: string[], env: Record<string, string>): Promise<{ code: number; out: string }> {
    const stdout = new MemoryStream();
    const stderr = new MemoryStream();
    const code = await main(argv, { stdout, stderr, env, cwd: dir, signal: new AbortController().signal });
    return { code, out: stdout.text + stderr.text };
  }

  const ingest = (state: string): string[] => [
    'ingest',
    't',
    '--source',
    `kafka://127.0.0.1:${broker.port}/orders`,
    '--state',
    state,
    '--until-end',
  ];

  it('from flags (a flag winning over its variable): certificate, CA, client id, SASL user and password file', async () => {
    broker.seen.length = 0;
    const r = await run(
      [
        ...ingest('st-flags'),
        '--kafka-ca',
        'ca.pem',
        '--kafka-cert',
        'client.pem',
        '--kafka-key',
        'client.key',
        '--kafka-client-id',
        'orders-to-lake',
        '--kafka-sasl',
        'plain',
        '--kafka-user',
        'svc-flag',
        '--kafka-password-file',
        'password',
      ],
      {
        TIDEMARK_KAFKA_KEY_PASSPHRASE: PASSPHRASE,
        TIDEMARK_KAFKA_USER: 'svc-env',
        TIDEMARK_KAFKA_CLIENT_ID: 'from-env',
        TIDEMARK_KAFKA_PASSWORD: 'not-this-one',
      },
    );
    expect(r.code, r.out).toBe(1);
    expect(r.out).toMatch(/refused the SASL credentials/);
    expect(broker.seen.length, r.out).toBeGreaterThan(0);
    expect(broker.seen[0]).toMatchObject({
      authorized: true,
      clientCertCN: 'ingest-client',
      mechanism: 'PLAIN',
      user: 'svc-flag',
      password: PASSWORD,
    });
    expect(new Set(broker.seen.flatMap((s) => s.clientIds))).toEqual(new Set(['orders-to-lake']));
    for (const secret of [PASSWORD, PASSPHRASE, 'not-this-one']) expect(r.out).not.toContain(secret);
  });

  it('from TIDEMARK_KAFKA_* variables alone', async () => {
    broker.seen.length = 0;
    const r = await run(ingest('st-env'), {
      TIDEMARK_KAFKA_CA: 'ca.pem',
      TIDEMARK_KAFKA_CERT: 'client.pem',
      TIDEMARK_KAFKA_KEY: 'client.key',
      TIDEMARK_KAFKA_KEY_PASSPHRASE: PASSPHRASE,
      TIDEMARK_KAFKA_CLIENT_ID: 'from-env',
      TIDEMARK_KAFKA_SASL_MECHANISM: 'plain',
      TIDEMARK_KAFKA_USER: 'svc-env',
      TIDEMARK_KAFKA_PASSWORD: PASSWORD,
    });
    expect(r.code, r.out).toBe(1);
    expect(r.out).toMatch(/refused the SASL credentials/);
    expect(broker.seen[0]).toMatchObject({ authorized: true, clientCertCN: 'ingest-client', user: 'svc-env', password: PASSWORD });
    expect(new Set(broker.seen.flatMap((s) => s.clientIds))).toEqual(new Set(['from-env']));
    for (const secret of [PASSWORD, PASSPHRASE]) expect(r.out).not.toContain(secret);
  });

  it.each(['scram-sha-256', 'scram-sha-512'])('--kafka-sasl %s: the mechanism and the user reach the broker', async (mechanism) => {
    broker.seen.length = 0;
    const r = await run([...ingest(`st-${mechanism}`), '--kafka-ca', 'ca.pem', '--kafka-sasl', mechanism, '--kafka-user', 'svc-scram'], {
      TIDEMARK_KAFKA_CERT: 'client.pem',
      TIDEMARK_KAFKA_KEY: 'client-plain.key',
      TIDEMARK_KAFKA_PASSWORD: PASSWORD,
    });
    expect(r.code, r.out).toBe(1);
    expect(r.out).toMatch(/refused the SASL credentials/);
    expect(broker.seen[0]).toMatchObject({ authorized: true, mechanism: mechanism.toUpperCase(), user: 'svc-scram' });
    expect(r.out).not.toContain(PASSWORD);
  });

  it('--kafka-tls without --kafka-ca trusts only the system CAs: a TLS error naming the brokers, no credentials sent', async () => {
    broker.seen.length = 0;
    const r = await run([...ingest('st-noca'), '--kafka-tls', '--kafka-sasl', 'plain', '--kafka-user', 'svc'], {
      TIDEMARK_KAFKA_PASSWORD: PASSWORD,
    });
    expect(r.code, r.out).toBe(1);
    // The client refused the broker's certificate (its CA is not a system CA), naming the brokers.
    expect(r.out).toMatch(/brokers 127\.0\.0\.1:\d+\): .*self-signed certificate/);
    expect(broker.seen.filter((s) => s.password !== undefined)).toEqual([]);
    expect(r.out).not.toContain(PASSWORD);
  });
});
