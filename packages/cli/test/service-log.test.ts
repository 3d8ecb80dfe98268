import { describe, expect, it } from 'vitest';
import { defineCommand } from '../src/command.js';
import { InterruptedError } from '../src/errors.js';
import { main } from '../src/main.js';
import { commandLog, redactSecrets } from '../src/output/log.js';
import { MemoryStream } from './helpers.js';

const NOW = Date.parse('2024-05-01T12:00:00Z');

describe('commandLog', () => {
  it('json: one object per line with time, level and msg first, then the fields', () => {
    const out = new MemoryStream();
    const log = commandLog(out, 'json', 'ingest', () => NOW);
    log.info('checkpoint committed', { checkpointId: 3n, records: 10, offset: { byte: 5, skip: 1 }, skipped: undefined }, 'checkpoint 3');
    log.info('reading', { restoredFrom: null }, null);
    log.warn('slow', { msg: 'a field named msg', big: 2n ** 64n });
    log.error('failed');
    const events = out.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events).toEqual([
      {
        time: '2024-05-01T12:00:00.000Z',
        level: 'info',
        msg: 'checkpoint committed',
        checkpointId: 3,
        records: 10,
        offset: { byte: 5, skip: 1 },
      },
      { time: '2024-05-01T12:00:00.000Z', level: 'info', msg: 'reading', restoredFrom: null },
      { time: '2024-05-01T12:00:00.000Z', level: 'warn', msg: 'slow', field_msg: 'a field named msg', big: '18446744073709551616' },
      { time: '2024-05-01T12:00:00.000Z', level: 'error', msg: 'failed' },
    ]);
    expect(Object.keys(events[0]!).slice(0, 3)).toEqual(['time', 'level', 'msg']);
  });

  it('text: the given line, nothing for detail-only events, warnings and errors as the CLI prints them', () => {
    const out = new MemoryStream();
    const log = commandLog(out, 'text', 'ingest');
    log.info('checkpoint committed', { checkpointId: 3 }, 'checkpoint 3: 10 records');
    log.info('reading', { offset: 1 }, null);
    log.info('plain');
    log.warn('careful');
    log.error('broken');
    expect(out.text).toBe('checkpoint 3: 10 records\nplain\ntidemark: warning: careful\ntidemark ingest: broken\n');
  });

  it('masks secrets in messages and fields, in both formats', () => {
    const json = new MemoryStream();
    commandLog(json, 'json', 'ingest').warn('cannot reach http://svc:hunter2@broker:9092', {
      url: 'https://b/o?X-Amz-Signature=abc&x=1',
      client: '{"sasl":{"password":"pw1"}}',
    });
    expect(json.text).not.toMatch(/hunter2|abc&|pw1/);
    expect(JSON.parse(json.text)).toMatchObject({
      msg: 'cannot reach http://svc:***@broker:9092',
      url: 'https://b/o?X-Amz-Signature=***&x=1',
    });
    const text = new MemoryStream();
    commandLog(text, 'text', 'ingest').warn('aws_secret_access_key=s3cr3t/+x and token=t0k');
    expect(text.text).toBe('tidemark: warning: aws_secret_access_key=*** and token=***\n');
  });

  it('redactSecrets leaves ordinary text alone', () => {
    for (const t of [
      's3://bucket/db.db/t',
      'checkpoint 3: 10 records, snapshot 4',
      'S3 refused the credentials: InvalidAccessKeyId',
      'http://localhost:9464/metrics',
    ]) {
      expect(redactSecrets(t)).toBe(t);
    }
  });
});

describe('main: SIGTERM', () => {
  const waiter = (name: string, stopsGracefully: boolean, onStart: () => void, seen: unknown[]) =>
    defineCommand({
      name,
      summary: 'waits for abort',
      usage: { synopsis: [name], positionals: [], options: {} },
      stopsGracefully,
      async run(_args, ctx) {
        await new Promise<void>((resolve) => {
          ctx.signal.addEventListener('abort', () => resolve(), { once: true });
          onStart();
        });
        seen.push(ctx.signal.reason);
        return 0;
      },
    });

  it('aborts the signal of a command that stops gracefully, which then ends with its own code; main prints nothing', async () => {
    const others = process.listeners('SIGTERM');
    for (const l of others) process.off('SIGTERM', l);
    try {
      const stderr = new MemoryStream();
      const seen: unknown[] = [];
      const code = await main(['serve'], {
        stdout: new MemoryStream(),
        stderr,
        env: {},
        commands: [waiter('serve', true, () => setImmediate(() => process.emit('SIGTERM')), seen)],
      });
      expect(code).toBe(0);
      expect(seen[0]).toBeInstanceOf(InterruptedError);
      expect((seen[0] as InterruptedError).signal).toBe('SIGTERM');
      expect(stderr.text).toBe('');
      expect(process.listenerCount('SIGTERM')).toBe(0);
    } finally {
      for (const l of others) process.on('SIGTERM', l);
    }
  });

  it('is left to its default (ending the process) for other commands', async () => {
    const others = process.listeners('SIGINT');
    for (const l of others) process.off('SIGINT', l);
    try {
      let listeners = -1;
      const before = process.listenerCount('SIGTERM');
      const cmd = waiter(
        'other',
        false,
        () => {
          listeners = process.listenerCount('SIGTERM');
          setImmediate(() => process.emit('SIGINT'));
        },
        [],
      );
      await main(['other'], { stdout: new MemoryStream(), stderr: new MemoryStream(), env: {}, commands: [cmd] });
      expect(listeners).toBe(before);
    } finally {
      for (const l of others) process.on('SIGINT', l);
    }
  });
});
