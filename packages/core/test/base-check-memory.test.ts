/**
 * What the base check remembers between commits (`BaseCheckMemory`): which files are pending for
 * the next commit that touches their bucket, and when a bucket may count as checked. The
 * end-to-end behaviour (a refused commit on disk and S3) is in test/base-check-memory.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { BaseCheckMemory } from '../src/commit/base-check.js';

const file = (path: string, manifest = 'manifest-1'): { path: string; size: number; manifest: string } => ({ path, size: 10, manifest });

describe('BaseCheckMemory', () => {
  it('keeps added files pending until they pass, and a DELETE cancels one', () => {
    const m = new BaseCheckMemory();
    m.record('A', 'id-1', file('a/1'), false);
    m.record('A', 'id-2', file('a/2'), false);
    m.record('A', 'id-2', null, false); // deleted by a later manifest
    expect(m.pendingOf('A', new Set(['manifest-1'])).map((f) => f.path)).toEqual(['a/1']);
    // Only for a base that lists the manifest adding it (an older base does not have the file).
    expect(m.pendingOf('A', new Set(['manifest-0']))).toEqual([]);
    m.passed('a/1', 'A');
    expect(m.pendingOf('A', new Set(['manifest-1']))).toEqual([]);
    // A file that passed is not kept again when a merged manifest lists it anew.
    m.record('A', 'id-1', file('a/1', 'manifest-merged'), false);
    expect(m.pendingOf('A', new Set(['manifest-merged']))).toEqual([]);
  });

  it('does not keep the files its own committers committed for later, but does for the commit that touches their bucket now', () => {
    const m = new BaseCheckMemory();
    m.committed(['a/own']);
    m.record('A', 'id-own', file('a/own'), false);
    expect(m.pendingOf('A', new Set(['manifest-1']))).toEqual([]);
    m.record('A', 'id-own', file('a/own'), true);
    expect(m.pendingOf('A', new Set(['manifest-1'])).map((f) => f.path)).toEqual(['a/own']);
  });

  it('forgets a file its commit deletes and has the next check fold its bucket afresh', () => {
    const m = new BaseCheckMemory();
    const started = m.begin(5, new Set(['A']));
    m.record('A', 'id-1', file('a/1'), true);
    m.record('A', 'id-2', file('a/2'), true);
    m.skipped('a/1', 'A');
    m.passed('a/2', 'A');
    m.end(started, new Set(['A']), true, new Set(['A']));
    // Not pending (its commit deletes it), not good (it was never checked), the bucket not checked.
    expect(m.pendingOf('A', new Set(['manifest-1']))).toEqual([]);
    expect(m.goodFiles.has('a/1')).toBe(false);
    expect(m.checkedBuckets.has('A')).toBe(false);
    // A bucket checked before loses that status too.
    m.end(m.begin(6, new Set(['B'])), new Set(['B']), true);
    expect(m.checkedBuckets.has('B')).toBe(true);
    m.skipped('b/1', 'B');
    expect(m.checkedBuckets.has('B')).toBe(false);
  });

  it('keeps the files of buckets checked or being checked for the first time, not of others', () => {
    const m = new BaseCheckMemory();
    expect(m.keeps('A')).toBe(false);
    const started = m.begin(5, new Set(['A']));
    expect(m.keeps('A')).toBe(true);
    m.end(started, new Set(['A']), true);
    expect(m.keeps('A')).toBe(true);
    expect(m.checkedBuckets.has('A')).toBe(true);
    expect(m.keeps('B')).toBe(false);
  });

  it('does not count a bucket as checked after a failed check, or when a check of a newer base ran meanwhile', () => {
    const m = new BaseCheckMemory();
    m.end(m.begin(5, new Set(['A'])), new Set(['A']), false);
    expect(m.checkedBuckets.has('A')).toBe(false);
    expect(m.keeps('A')).toBe(false);
    // A check of snapshot 5 that ends after one of snapshot 6 started: manifests of 6 it did not
    // read may have been marked good without keeping A's files.
    const older = m.begin(5, new Set(['A']));
    const newer = m.begin(6, new Set(['B']));
    m.end(older, new Set(['A']), true);
    m.end(newer, new Set(['B']), true);
    expect(m.checkedBuckets.has('A')).toBe(false);
    expect(m.checkedBuckets.has('B')).toBe(true);
  });
});
