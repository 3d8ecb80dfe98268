// The Kafka-protocol broker of the tests: test/kafka/mock-broker.c (librdkafka's mock cluster as a
// process of ours), built and started the way the S3 server is. Shared by scripts/test.mjs (which
// installs the packages and builds the program once, then exports TIDEMARK_KAFKA_BROKER), the
// Kafka suites (one broker per suite, fresh topic names per test), the chaos harness and the
// benchmark. Facts and limits: ../shared/docs/kafka-test-broker.md (5 MiB per partition unless
// compressed, no topic deletion, no SASL).
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { aptGet } from '../support/apt-get.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const brokerSource = path.join(here, 'mock-broker.c');
const HEADER = '/usr/include/librdkafka/rdkafka_mock.h';

const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;

/** Installs librdkafka-dev, kcat and gcc with apt-get when missing; true when all are there afterwards. */
function ensurePackages(log) {
  const ready = () => existsSync(HEADER) && has('kcat') && has('gcc');
  if (ready()) return true;
  if (!has('apt-get')) {
    log('librdkafka-dev, kcat or gcc is missing and apt-get is not available to install them');
    return false;
  }
  log('installing librdkafka-dev kcat gcc with apt-get for the Kafka test broker (about 10 s)');
  const install = ['install', '-y', '-qq', '--no-install-recommends', 'librdkafka-dev', 'kcat', 'gcc', 'libc6-dev'];
  if (!aptGet(install, log)) {
    aptGet(['update', '-qq'], log);
    aptGet(install, log);
  }
  return ready();
}

/**
 * Path of the built broker program: compiled from mock-broker.c into the temp dir (the name holds
 * the source's hash, so an edit rebuilds it), installing the packages first when they are missing.
 * Returns `{ binary }` or `{ reason }` when it cannot be built here.
 */
export function ensureKafkaBroker(log = (msg) => console.log(msg)) {
  const source = readFileSync(brokerSource);
  const hash = createHash('sha256').update(source).digest('hex').slice(0, 12);
  const dir = path.join(os.tmpdir(), 'tidemark-kafka-broker');
  const binary = path.join(dir, `mock-broker-${hash}`);
  if (existsSync(binary)) return { binary };
  if (!ensurePackages(log)) return { reason: 'librdkafka-dev, kcat and gcc could not be installed (apt-get as root or with sudo -n)' };
  mkdirSync(dir, { recursive: true });
  const tmp = `${binary}.${process.pid}.tmp`;
  const r = spawnSync('gcc', ['-O2', '-o', tmp, brokerSource, '-lrdkafka'], { encoding: 'utf8' });
  if (r.status !== 0) return { reason: `gcc could not build ${brokerSource}: ${(r.stderr || r.error?.message || '').trim()}` };
  renameSync(tmp, binary);
  log(`built the Kafka test broker: ${binary}`);
  return { binary };
}

/** The broker program of this run: $TIDEMARK_KAFKA_BROKER (exported by scripts/test.mjs) or built now. */
export function kafkaBrokerBinary(log = () => undefined) {
  const preset = process.env.TIDEMARK_KAFKA_BROKER;
  if (preset && existsSync(preset)) return { binary: preset };
  return ensureKafkaBroker(log);
}

/**
 * A running mock cluster. `bootstrap` is "127.0.0.1:p1,127.0.0.1:p2,..."; broker ids are 1..n.
 * `command(line)` sends one fault-injection command (see mock-broker.c) and resolves when the
 * broker acknowledged it; `stop()` ends the process.
 */
export class KafkaTestBroker {
  constructor(child, bootstrap, lines) {
    this.child = child;
    this.bootstrap = bootstrap;
    this.brokers = bootstrap.split(',');
    this.lines = lines;
    this.waiting = [];
    lines.on('line', (line) => this.waiting.shift()?.(line));
  }

  /** Starts a cluster of `brokers` brokers with `topics` ({ name: partitions }) created. */
  static async start({ binary, brokers = 3, topics = {} } = {}) {
    const bin = binary ?? kafkaBrokerBinary().binary;
    if (!bin) throw new Error('the Kafka test broker is not built (see test/kafka/broker.mjs)');
    const args = [String(brokers), ...Object.entries(topics).map(([t, p]) => `${t}:${p}`)];
    const child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    const lines = createInterface({ input: child.stdout });
    const bootstrap = await new Promise((resolve, reject) => {
      const onExit = (code) => reject(new Error(`the Kafka test broker exited with code ${code} before printing its bootstrap list`));
      child.once('exit', onExit);
      child.once('error', reject);
      lines.once('line', (line) => {
        child.off('exit', onExit);
        resolve(line.trim());
      });
    });
    // Stopped by stop(); when this process dies first, the broker sees stdin EOF and exits too.
    return new KafkaTestBroker(child, bootstrap, lines);
  }

  /** Sends one command line; rejects with the broker's answer when it is an error. */
  command(line) {
    return new Promise((resolve, reject) => {
      this.waiting.push((answer) => (answer === 'ok' ? resolve() : reject(new Error(`mock broker: '${line}': ${answer}`))));
      this.child.stdin.write(`${line}\n`);
    });
  }

  createTopic(name, partitions) {
    return this.command(`topic ${name} ${partitions}`);
  }

  /** The next `codes.length` requests with this API key fail with these Kafka error codes. */
  pushErrors(apiKey, codes) {
    return this.command(`errors ${apiKey} ${codes.join(',')}`);
  }

  /** Drops the errors still pushed for this API key. */
  clearErrors(apiKey) {
    return this.command(`clear ${apiKey}`);
  }

  setDown(brokerId) {
    return this.command(`down ${brokerId}`);
  }

  setUp(brokerId) {
    return this.command(`up ${brokerId}`);
  }

  setLeader(topic, partition, brokerId) {
    return this.command(`leader ${topic} ${partition} ${brokerId}`);
  }

  /** Metadata requests for `topic` fail with this Kafka error code (3: the topic does not exist). */
  setTopicError(topic, code) {
    return this.command(`topic-error ${topic} ${code}`);
  }

  stop() {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.stdin.end();
      this.child.kill('SIGTERM');
    });
  }
}

/** Kafka API keys used with {@link KafkaTestBroker.pushErrors}. */
export const API_KEYS = { Produce: 0, Fetch: 1, ListOffsets: 2, Metadata: 3, OffsetCommit: 8, OffsetFetch: 9, FindCoordinator: 10 };
/** Kafka error codes used in the fault tests. */
export const ERROR_CODES = {
  UNKNOWN_TOPIC_OR_PARTITION: 3,
  LEADER_NOT_AVAILABLE: 5,
  NOT_LEADER_OR_FOLLOWER: 6,
  REQUEST_TIMED_OUT: 7,
  NOT_COORDINATOR: 16,
  TOPIC_AUTHORIZATION_FAILED: 29,
};
