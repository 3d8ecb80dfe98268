import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CorruptFileError } from '../src/errors.js';
import { parseSnapshot, serializeSnapshot, type Snapshot } from '../src/snapshot.js';
import { HAVE_FIXTURES, fixtureFiles } from './fixtures.js';

describe.skipIf(!HAVE_FIXTURES)('fixture snapshots', () => {
  const files = fixtureFiles('snapshot', /^snapshot-\d+$/);
  it('found fixture snapshots', () => expect(files.length).toBeGreaterThanOrEqual(13));
  for (const file of files) {
    it(`round-trips ${file.split('/fixtures/paimon/')[1]}`, () => {
      const text = readFileSync(file, 'utf8');
      const s = parseSnapshot(text, file);
      expect(s.id).toBe(Number(file.split('-').pop()));
      const again = parseSnapshot(serializeSnapshot(s), file);
      expect(again).toEqual(s);
      // Every member Java wrote with a non-null value survives.
      const raw = JSON.parse(text) as Record<string, unknown>;
      const out = JSON.parse(serializeSnapshot(s)) as Record<string, unknown>;
      for (const [k, v] of Object.entries(raw)) if (v !== null) expect(out[k], k).toEqual(v);
    });
  }

  it('reads pk-dv snapshot-6 members', () => {
    const file = files.find((f) => f.includes('pk-dv') && f.endsWith('snapshot-6'))!;
    const s = parseSnapshot(readFileSync(file), file);
    expect(s.commitIdentifier).toBe(4n);
    expect(s.commitKind).toBe('APPEND');
    expect(s.indexManifest).toBe('index-manifest-3f491f6b-79ec-484b-aa03-f4737e96bf9a-0');
    expect(s.changelogManifestList).toBeUndefined();
    expect(s.totalRecordCount).toBe(16);
    expect(s.nextRowId).toBe(0);
  });
});

const snap: Snapshot = {
  version: 3,
  id: 7,
  schemaId: 1,
  baseManifestList: 'manifest-list-a-0',
  baseManifestListSize: 100,
  deltaManifestList: 'manifest-list-a-1',
  deltaManifestListSize: 200,
  commitUser: 'u',
  commitIdentifier: 9223372036854775807n,
  commitKind: 'OVERWRITE',
  timeMillis: 1700000000000,
  totalRecordCount: 10,
  deltaRecordCount: -2,
  watermark: -9223372036854775808n,
  nextRowId: 0,
};

describe('snapshot model', () => {
  it('writes the recommended member order and keeps Long.MAX/Long.MIN exact', () => {
    const text = serializeSnapshot(snap);
    expect(text).toBe(
      [
        '{',
        '  "version" : 3,',
        '  "id" : 7,',
        '  "schemaId" : 1,',
        '  "baseManifestList" : "manifest-list-a-0",',
        '  "baseManifestListSize" : 100,',
        '  "deltaManifestList" : "manifest-list-a-1",',
        '  "deltaManifestListSize" : 200,',
        '  "commitUser" : "u",',
        '  "commitIdentifier" : 9223372036854775807,',
        '  "commitKind" : "OVERWRITE",',
        '  "timeMillis" : 1700000000000,',
        '  "totalRecordCount" : 10,',
        '  "deltaRecordCount" : -2,',
        '  "watermark" : -9223372036854775808,',
        '  "nextRowId" : 0',
        '}',
      ].join('\n'),
    );
    expect(parseSnapshot(text, 'x')).toEqual(snap);
  });

  it('places optional members where Java does and omits empty properties', () => {
    const full: Snapshot = {
      ...snap,
      uuid: 'id-1',
      changelogManifestList: 'manifest-list-a-2',
      changelogManifestListSize: 5,
      indexManifest: 'index-manifest-b-0',
      writerVersion: '2.1',
      changelogRecordCount: 3,
      statistics: 'stat-1',
      properties: { k: 'v' },
      operation: 'WRITE',
    };
    const keys = Object.keys(JSON.parse(serializeSnapshot(full)) as object);
    expect(keys).toEqual([
      'version',
      'uuid',
      'id',
      'schemaId',
      'baseManifestList',
      'baseManifestListSize',
      'deltaManifestList',
      'deltaManifestListSize',
      'changelogManifestList',
      'changelogManifestListSize',
      'indexManifest',
      'commitUser',
      'writerVersion',
      'commitIdentifier',
      'commitKind',
      'timeMillis',
      'totalRecordCount',
      'deltaRecordCount',
      'changelogRecordCount',
      'watermark',
      'statistics',
      'properties',
      'nextRowId',
      'operation',
    ]);
    expect(parseSnapshot(serializeSnapshot(full), 'x')).toEqual(full);
    expect(serializeSnapshot({ ...snap, properties: {} })).not.toContain('properties');
  });

  it('rejects broken snapshots naming the file', () => {
    expect(() => parseSnapshot('{"version":3}', 'snapshot/snapshot-9')).toThrow(CorruptFileError);
    expect(() => parseSnapshot('{"version":3}', 'snapshot/snapshot-9')).toThrow(/snapshot-9.*commitKind/);
    const bad = serializeSnapshot(snap).replace('OVERWRITE', 'NOPE');
    expect(() => parseSnapshot(bad, 's')).toThrow(/commitKind 'NOPE'/);
  });
});
