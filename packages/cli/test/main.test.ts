import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { defineCommand } from '../src/command.js';
import type { Command } from '../src/command.js';
import { commands } from '../src/commands/index.js';
import { main } from '../src/main.js';
import type { MainOptions } from '../src/main.js';
import { MemoryStream } from './helpers.js';

async function run(argv: string[], options: MainOptions = {}) {
  const stdout = new MemoryStream();
  const stderr = new MemoryStream();
  const code = await main(argv, { stdout, stderr, signal: new AbortController().signal, env: {}, ...options });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

const expectedNames = [
  'read',
  'count',
  'sql',
  'stream',
  'tail',
  'consumers',
  'snapshots',
  'schema',
  'files',
  'partitions',
  'inspect',
  'create',
  'write',
  'delete',
  'update',
  'tag',
  'rollback',
  'alter',
  'expire-snapshots',
  'expire-partitions',
  'drop-partition',
  'remove-orphan-files',
  'compact',
  'compact-manifests',
  'maintain',
  'verify',
  'ingest',
  'db',
  'table',
];

/** The smallest valid command line of each command. */
const minimalArgs: Record<string, string[]> = {
  read: ['read', 't'],
  count: ['count', 't'],
  sql: ['sql', 'SELECT 1', '--table', 'o=t'],
  stream: ['stream', 't'],
  tail: ['tail', 't'],
  consumers: ['consumers', 'list', 't'],
  snapshots: ['snapshots', 't'],
  schema: ['schema', 't'],
  files: ['files', 't', '--snapshot', '3'],
  inspect: ['inspect', 't', '--html', 'r.html'],
  create: ['create', 't', '--schema', '[{"name":"id","type":"BIGINT"}]'],
  write: ['write', 't', '--input', '-'],
  delete: ['delete', 't', '--where', 'id = 1'],
  update: ['update', 't', '--where', 'id = 1', '--set', '{"v": 1}'],
  tag: ['tag', 'create', 't', 'v1'],
  rollback: ['rollback', 't', '--to', '3'],
  alter: ['alter', 't', 'add-column', 'c', 'INT'],
  'expire-snapshots': ['expire-snapshots', 't', '--older-than', '7d'],
  'remove-orphan-files': ['remove-orphan-files', 't'],
  partitions: ['partitions', 't'],
  'expire-partitions': ['expire-partitions', 't', '--expiration-time', '30d'],
  'drop-partition': ['drop-partition', 't', '--partition', 'dt=2024-01-01'],
  compact: ['compact', 't', '--partition', 'dt=2024-01-01'],
  'compact-manifests': ['compact-manifests', 't'],
  maintain: ['maintain', 't1', 't2'],
  verify: ['verify', 't', '--all'],
  ingest: ['ingest', 't', '--source', 'in.jsonl', '--state', 'st'],
  db: ['db', 'list', 'w'],
  table: ['table', 'list', 'w'],
};

describe('command registry', () => {
  it('has every command of issues 3-6 with a consistent declaration', () => {
    expect(commands.map((c) => c.name)).toEqual(expectedNames);
    for (const c of commands) {
      const declared = new Set(Object.keys(c.usage.options));
      for (const group of c.usage.conflicts ?? []) for (const n of group) expect(declared.has(n), `${c.name} --${n}`).toBe(true);
      for (const [a, b] of Object.entries(c.usage.requires ?? {}))
        expect(declared.has(a) && declared.has(b), `${c.name} ${a}->${b}`).toBe(true);
    }
  });
});

describe('main: help and dispatch', () => {
  it('no arguments: overview on stderr, exit 2', async () => {
    const r = await run([]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Usage: tidemark <command>');
    expect(r.stdout).toBe('');
  });
  it('--help lists every command on stdout, exit 0', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    for (const n of expectedNames) expect(r.stdout).toContain(`  ${n} `);
  });
  it('help <command> and <command> --help print that usage, exit 0', async () => {
    for (const name of expectedNames) {
      const a = await run(['help', name]);
      const b = await run([name, '--help']);
      expect(a.code).toBe(0);
      expect(b.code).toBe(0);
      expect(a.stdout).toContain(`Usage: tidemark ${name}`);
      expect(b.stdout).toBe(a.stdout);
    }
  });
  it('unknown command: exit 2 with a suggestion', async () => {
    const r = await run(['reed', 't']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown command 'reed'");
    expect(r.stderr).toContain('did you mean read');
  });
  it('--version prints the package version', async () => {
    const r = await run(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe('main: bad usage exits 2 with that command usage on stderr', () => {
  it.each([
    [['read'], 'missing argument <table>'],
    [['read', 't', '--snapshot', '1', '--tag', 'x'], "options '--snapshot' and '--tag' cannot be used together"],
    [['read', 't', '--timestamp', '5', '--tag', 'x'], 'cannot be used together'],
    [['read', 't', '--timestamp', 'soon'], "option '--timestamp' needs an ISO-8601 time"],
    [['read', 't', '--limit'], "option '--limit' needs a value"],
    [['read', 't', '--limit', '-1'], "option '--limit' must be at least 0"],
    [['read', 't', '--format', 'xml'], "option '--format' must be one of jsonl, csv, table"],
    [['read', 't', '--colums', 'a'], "did you mean '--columns'"],
    [['write', 't', '--partition', 'dt=1'], "option '--partition' requires '--overwrite'"],
    [['write', 't', '--commit-user', 'u'], "requires '--commit-identifier'"],
    [['write', 't', '--overwrite', '--partition', 'dt'], 'needs key=value'],
    [['delete', 't'], "give the keys to delete with '--where <predicate>' or '--input <file>'"],
    [['delete', 't', '--where', 'id = 1', '--input', 'k.jsonl'], 'cannot be used together'],
    [['delete', 't', '--where', 'id = 1', '--format', 'csv'], "option '--format' requires '--input'"],
    [['create', 't'], "option '--schema' is required"],
    [['tag', 'rename', 't'], "unknown tag action 'rename'"],
    [['tag', 'create', 't'], 'needs a tag name'],
    [['alter', 't', 'add-column', 'c'], "'alter add-column' needs <name> <type>"],
    [['rollback', 't'], "option '--to' is required"],
    [['expire-snapshots', 't', '--retain-min', '5', '--retain-max', '2'], 'cannot exceed'],
    [['expire-snapshots', 't', '--older-than', 'forever'], "option '--older-than'"],
    [['remove-orphan-files', 't', '--older-than', '2999-01-01T00:00:00Z'], 'is in the future'],
    [['maintain'], 'either one or more <table>'],
    [['maintain', 't', '--warehouse', 'w'], 'either one or more <table>'],
    [['ingest', 't', '--source', 's'], "option '--state' is required"],
  ])('%j', async (argv, message) => {
    const r = await run(argv);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stderr).toContain(`Usage: tidemark ${argv[0]!}`);
    expect(r.stdout).toBe('');
  });
});

/** Every command runs a real engine now (`create` makes the table, so it is tested elsewhere). */
const wiredNames = [
  'read',
  'count',
  'sql',
  'stream',
  'tail',
  'consumers',
  'snapshots',
  'schema',
  'files',
  'inspect',
  'create',
  'write',
  'delete',
  'update',
  'tag',
  'rollback',
  'alter',
  'ingest',
  'expire-snapshots',
  'expire-partitions',
  'drop-partition',
  'partitions',
  'remove-orphan-files',
  'compact',
  'compact-manifests',
  'verify',
];

describe('main: commands on a missing table', () => {
  it('every command has an engine', () => {
    expect([...expectedNames].sort()).toEqual([...wiredNames, 'maintain', 'db', 'table'].sort());
  });
  it.each(wiredNames.filter((n) => n !== 'create'))('%s on a missing table fails with one line and exit 1', async (name) => {
    const cwd = mkdtempSync(join(tmpdir(), 'tidemark-main-'));
    try {
      const r = await run(minimalArgs[name]!, { cwd, stdin: Readable.from(['']) });
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain(join(cwd, 't'));
      expect(r.stderr).not.toContain('    at ');
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
  it('maintain reports the missing table without a stack and exits 1', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'tidemark-main-'));
    try {
      const r = await run(minimalArgs['maintain']!, { cwd });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(join(cwd, 't'));
      expect(r.stderr).not.toContain('    at ');
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
  it('remove-orphan-files warns below one hour', async () => {
    const r = await run(['remove-orphan-files', 't', '--older-than', '10m']);
    expect(r.stderr).toContain('warning: --older-than is under 1 hour');
  });
});

describe('main: error reporting', () => {
  class StoreError extends Error {
    readonly userError = true;
  }
  // Classification goes by each error's own userError flag, never by class name.
  class FormatError extends Error {
    readonly userError: boolean = true;
  }
  class CorruptFileError extends FormatError {}
  class NamedLikeAUserError extends Error {}
  const thrower = (err: unknown): Command =>
    defineCommand({
      name: 'boom',
      summary: 'throws',
      usage: { synopsis: ['boom'], positionals: [], options: {} },
      async run() {
        throw err;
      },
    });

  it('user errors print one line, no stack', async () => {
    for (const err of [
      new StoreError('snapshot 7 does not exist; earliest is 3, latest is 9'),
      new CorruptFileError('manifest-1.avro: truncated'),
    ]) {
      const r = await run(['boom'], { commands: [thrower(err)] });
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`tidemark boom: ${err.message}\n`);
    }
  });
  it('errors flagged userError = false are unexpected, whatever their class is named', async () => {
    const internal = Object.assign(new NamedLikeAUserError('manifest list of snapshot 3 is truncated'), { userError: false });
    Object.defineProperty(NamedLikeAUserError, 'name', { value: 'TidemarkUserError' });
    const quiet = await run(['boom'], { commands: [thrower(internal)] });
    expect(quiet.code).toBe(1);
    expect(quiet.stderr).toContain('unexpected error: manifest list of snapshot 3 is truncated');
    const debug = await run(['boom'], { commands: [thrower(internal)], env: { TIDEMARK_DEBUG: '1' } });
    expect(debug.stderr).toContain('    at ');
  });
  it('unexpected errors print the message, and the stack only with TIDEMARK_DEBUG=1', async () => {
    const err = new TypeError('x is undefined');
    const quiet = await run(['boom'], { commands: [thrower(err)] });
    expect(quiet.code).toBe(1);
    expect(quiet.stderr).toContain('unexpected error: x is undefined');
    expect(quiet.stderr).toContain('TIDEMARK_DEBUG=1');
    expect(quiet.stderr).not.toContain('    at ');
    const debug = await run(['boom'], { commands: [thrower(err)], env: { TIDEMARK_DEBUG: '1' } });
    expect(debug.code).toBe(1);
    expect(debug.stderr).toContain('    at ');
  });
  it('EPIPE on stdout is not a failure', async () => {
    const r = await run(['boom'], { commands: [thrower(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }))] });
    expect(r.code).toBe(0);
  });
  it('a command may return its own exit code', async () => {
    const cmd = defineCommand({
      name: 'three',
      summary: 's',
      usage: { synopsis: ['three'], positionals: [], options: {} },
      run: async () => 3,
    });
    expect((await run(['three'], { commands: [cmd] })).code).toBe(3);
  });
});

describe('main: interruption', () => {
  const waiter = (onStart: () => void) =>
    defineCommand({
      name: 'wait',
      summary: 'waits for abort',
      usage: { synopsis: ['wait'], positionals: [], options: {} },
      async run(_args, ctx) {
        await new Promise<void>((resolve, reject) => {
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
          onStart();
          void resolve;
        });
      },
    });

  it('an aborted signal stops the command with exit 130', async () => {
    const controller = new AbortController();
    const r = await run(['wait'], { commands: [waiter(() => controller.abort())], signal: controller.signal });
    expect(r.code).toBe(130);
    expect(r.stderr).toContain('interrupted');
  });

  it('SIGINT aborts the signal given to the command and the handler is removed afterwards', async () => {
    const others = process.listeners('SIGINT');
    for (const l of others) process.off('SIGINT', l);
    try {
      const stdout = new MemoryStream();
      const stderr = new MemoryStream();
      const code = await main(['wait'], { stdout, stderr, env: {}, commands: [waiter(() => setImmediate(() => process.emit('SIGINT')))] });
      expect(code).toBe(130);
      expect(stderr.text).toContain('stopping cleanly');
      expect(process.listenerCount('SIGINT')).toBe(0);
    } finally {
      for (const l of others) process.on('SIGINT', l);
    }
  });
});
