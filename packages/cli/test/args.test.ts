import { describe, expect, it } from 'vitest';
import { formatUsage, parseArgs } from '../src/args.js';
import type { CommandUsage } from '../src/args.js';
import { UsageError } from '../src/errors.js';

const usage = {
  synopsis: ['demo <table> [--snapshot N | --tag NAME]'],
  positionals: [{ name: 'table', description: 'the table' }],
  options: {
    snapshot: { type: 'integer', min: 1, valueName: 'N', description: 'snapshot id' },
    tag: { type: 'string', valueName: 'NAME', description: 'tag' },
    format: { type: 'string', choices: ['jsonl', 'csv'], description: 'format' },
    columns: { type: 'list', description: 'columns' },
    option: { type: 'multiple', description: 'k=v' },
    'dry-run': { type: 'boolean', short: 'n', description: 'dry run' },
    user: { type: 'string', description: 'user' },
    id: { type: 'integer', description: 'id' },
  },
  conflicts: [['snapshot', 'tag']],
  requires: { id: 'user' },
} as const satisfies CommandUsage;

const parse = (...argv: string[]) => parseArgs('demo', usage, argv);
const usageError = (...argv: string[]): UsageError => {
  try {
    parse(...argv);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).command).toBe('demo');
    return err as UsageError;
  }
  throw new Error(`expected a UsageError for ${argv.join(' ')}`);
};

describe('parseArgs', () => {
  it('parses typed options and positionals', () => {
    const a = parse(
      't1',
      '--snapshot',
      '7',
      '--columns',
      'a, b',
      '--option',
      'x=1',
      '--option=y=2',
      '-n',
      '--format=csv',
      '--id',
      '-3',
      '--user',
      'u',
    );
    expect(a.positionals).toEqual(['t1']);
    expect(a.named['table']).toBe('t1');
    expect(a.options.snapshot).toBe(7);
    expect(a.options.columns).toEqual(['a', 'b']);
    expect(a.options.option).toEqual(['x=1', 'y=2']);
    expect(a.options['dry-run']).toBe(true);
    expect(a.options.format).toBe('csv');
    expect(a.options.id).toBe(-3);
  });
  it('gives defaults for absent options', () => {
    const a = parse('t');
    expect(a.options['dry-run']).toBe(false);
    expect(a.options.columns).toEqual([]);
    expect(a.options.option).toEqual([]);
    expect(a.options.snapshot).toBeUndefined();
  });
  it('treats everything after -- as positional, and - as a value', () => {
    expect(parse('--tag', '-', '--', '--weird').positionals).toEqual(['--weird']);
    expect(parse('--tag', '-', 't').options.tag).toBe('-');
  });
  it('recognises --help anywhere before --', () => {
    expect(parse('--bogus', '--help').help).toBe(true);
    expect(parse('-h').help).toBe(true);
    expect(() => parse('--', '--help', 'x')).toThrow(UsageError);
  });
  it('rejects unknown options, suggesting a close one', () => {
    expect(usageError('t', '--snapshto', '1').message).toBe("unknown option '--snapshto' (did you mean '--snapshot'?)");
    expect(usageError('t', '-x').message).toBe("unknown option '-x'");
  });
  it('rejects missing values', () => {
    expect(usageError('t', '--snapshot').message).toContain("option '--snapshot' needs a value");
    expect(usageError('t', '--tag', '--format', 'csv').message).toContain("option '--tag' needs a value");
  });
  it('rejects malformed and out-of-range integers', () => {
    expect(usageError('t', '--snapshot', 'abc').message).toBe("option '--snapshot' needs an integer, got 'abc'");
    expect(usageError('t', '--snapshot', '0').message).toBe("option '--snapshot' must be at least 1, got 0");
    expect(usageError('t', '--snapshot', '99999999999999999999').message).toContain('out of range');
  });
  it('rejects conflicting, repeated and unmet requirements', () => {
    expect(usageError('t', '--snapshot', '1', '--tag', 'x').message).toBe("options '--snapshot' and '--tag' cannot be used together");
    expect(usageError('t', '--tag', 'a', '--tag', 'b').message).toBe("option '--tag' is given more than once");
    expect(usageError('t', '--id', '1').message).toBe("option '--id' requires '--user'");
    expect(usageError('t', '--dry-run=yes').message).toBe("option '--dry-run' takes no value");
  });
  it('rejects values outside choices and empty list items', () => {
    expect(usageError('t', '--format', 'xml').message).toBe("option '--format' must be one of jsonl, csv; got 'xml'");
    expect(usageError('t', '--columns', 'a,,b').message).toContain('empty item');
  });
  it('rejects missing and surplus positionals', () => {
    expect(usageError().message).toBe('missing argument <table>');
    expect(usageError('a', 'b').message).toBe("unexpected argument 'b'");
  });
});

describe('formatUsage', () => {
  it('lists the synopsis, arguments and every option', () => {
    const text = formatUsage('does things', usage);
    expect(text).toContain('Usage: tidemark demo <table> [--snapshot N | --tag NAME]');
    expect(text).toContain('<table>');
    for (const name of Object.keys(usage.options)) expect(text).toContain(`--${name}`);
    expect(text).toContain('-n, --dry-run');
    expect(text).toContain('-h, --help');
  });
});
