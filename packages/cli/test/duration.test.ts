import { describe, expect, it } from 'vitest';
import { UsageError } from '../src/errors.js';
import { parseDuration, parseInstant, parseOlderThan } from '../src/options/duration.js';

describe('parseDuration', () => {
  it.each([
    ['90s', 90_000],
    ['30m', 1_800_000],
    ['1h', 3_600_000],
    ['1d', 86_400_000],
    ['7d', 604_800_000],
    ['2w', 1_209_600_000],
    ['250ms', 250],
    ['0', 0],
  ])('%s', (text, ms) => {
    expect(parseDuration(text, '--older-than')).toBe(ms);
  });
  it.each(['', '1', '1y', '-1h', '1.5h', 'h', '1 h x'])('rejects %j naming the option', (text) => {
    expect(() => parseDuration(text, '--older-than')).toThrow(UsageError);
    expect(() => parseDuration(text, '--older-than')).toThrow(/--older-than/);
  });
});

describe('parseInstant', () => {
  it('reads ISO-8601 with and without zone, and epoch ms', () => {
    expect(parseInstant('2024-05-01T12:00:00Z', '--timestamp')).toBe(1_714_564_800_000);
    expect(parseInstant('2024-05-01T12:00:00', '--timestamp')).toBe(1_714_564_800_000);
    expect(parseInstant('2024-05-01T14:00:00+02:00', '--timestamp')).toBe(1_714_564_800_000);
    expect(parseInstant('2024-05-01T07:30:00-0430', '--timestamp')).toBe(1_714_564_800_000);
    expect(parseInstant('2024-05-01 12:00:00.250Z', '--timestamp')).toBe(1_714_564_800_250);
    expect(parseInstant('2024-05-01', '--timestamp')).toBe(1_714_521_600_000);
    expect(parseInstant('1714564800000', '--timestamp')).toBe(1_714_564_800_000);
    expect(parseInstant('1969-12-31T23:59:59.999Z', '--timestamp')).toBe(-1);
  });
  it.each(['2024-02-30', '2024-13-01', '2024-05-01T25:00:00Z', 'yesterday', '2024-05-01Z', '12.5'])(
    'rejects %j naming the option',
    (text) => {
      expect(() => parseInstant(text, '--timestamp')).toThrow(/option '--timestamp'/);
    },
  );
});

describe('parseOlderThan', () => {
  const now = 1_714_564_800_000;
  it('counts durations back from now', () => {
    expect(parseOlderThan('1d', '--older-than', now)).toEqual({ cutoffMs: now - 86_400_000, durationMs: 86_400_000 });
    expect(parseOlderThan('0', '--older-than', now).cutoffMs).toBe(now);
  });
  it('takes absolute times as they are', () => {
    expect(parseOlderThan('2024-05-01T00:00:00Z', '--older-than', now)).toEqual({ cutoffMs: 1_714_521_600_000 });
    expect(parseOlderThan('1714521600000', '--older-than', now)).toEqual({ cutoffMs: 1_714_521_600_000 });
  });
  it('names the option in errors', () => {
    expect(() => parseOlderThan('soon', '--older-than', now)).toThrow("option '--older-than' needs a duration");
  });
});
