/**
 * The pure steps of `verify` on their own: the snapshot chain, the hints, which snapshots are
 * checked and the de-duplication of data files. Whole runs over broken tables are in
 * test/verify-cli.test.ts and the maintenance integration suites.
 */
import { describe, expect, it } from 'vitest';
import { hintProblem, snapshotChainProblems, uniqueByPath, verifyTargets } from '../src/verify-table.js';

describe('verify steps', () => {
  it('reports each gap in the snapshot chain at its first missing id', () => {
    expect(snapshotChainProblems([3, 4, 5], (id) => `s-${id}`)).toEqual([]);
    expect(snapshotChainProblems([3, 4, 7, 9], (id) => `s-${id}`)).toEqual([
      { path: 's-5', snapshotId: null, problem: 'snapshot ids jump from 4 to 7 (missing snapshots)' },
      { path: 's-8', snapshotId: null, problem: 'snapshot ids jump from 7 to 9 (missing snapshots)' },
    ]);
  });

  it('a hint must be a snapshot id within the snapshots', () => {
    expect(hintProblem('LATEST', '5', [3, 4, 5])).toBeNull();
    expect(hintProblem('LATEST', '6', [3, 4, 5])).toBe('LATEST hint says 6, but the snapshots are 3..5');
    expect(hintProblem('EARLIEST', '2', [3, 4, 5])).toBe('EARLIEST hint says 2, but the snapshots are 3..5');
    expect(hintProblem('EARLIEST', 'x1', [3])).toBe("EARLIEST hint is not a snapshot id: 'x1'");
    expect(hintProblem('LATEST', '1', [])).toBe('LATEST hint says 1, but the table has no snapshots');
  });

  it('checks every snapshot with all, the one asked for, or the latest', () => {
    expect(verifyTargets([3, 4, 5], { all: true })).toEqual([3, 4, 5]);
    expect(verifyTargets([3, 4, 5], { snapshotId: 9 })).toEqual([9]);
    expect(verifyTargets([3, 4, 5], {})).toEqual([5]);
    expect(verifyTargets([], {})).toEqual([]);
  });

  it('checks a file reached through several snapshots once, named by the first', () => {
    const work = [
      { path: 'a', snapshotId: 1 },
      { path: 'b', snapshotId: 1 },
      { path: 'a', snapshotId: 2 },
    ];
    expect(uniqueByPath(work)).toEqual([work[0], work[1]]);
  });
});
