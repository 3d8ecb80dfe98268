import { describe, expect, it } from 'vitest';
import { parseTag, serializeTag, type Tag } from '../src/tag.js';

const tag: Tag = {
  version: 3,
  id: 2,
  schemaId: 0,
  baseManifestList: 'manifest-list-a-0',
  deltaManifestList: 'manifest-list-a-1',
  commitUser: 'u',
  commitIdentifier: 9223372036854775807n,
  commitKind: 'APPEND',
  timeMillis: 1,
  totalRecordCount: 1,
  deltaRecordCount: 1,
  // 2024-03-05T10:20:30.123456789 wall clock
  tagCreateTime: { millis: Date.UTC(2024, 2, 5, 10, 20, 30, 123), nanoOfMillis: 456789 },
  tagTimeRetained: { seconds: 4, nanos: 0 },
};

describe('tag files', () => {
  it('appends tagCreateTime / tagTimeRetained after the snapshot members in Jackson form', () => {
    const text = serializeTag(tag);
    expect(text).toContain(
      '"deltaRecordCount" : 1,\n  "tagCreateTime" : [ 2024, 3, 5, 10, 20, 30, 123456789 ],\n  "tagTimeRetained" : 4.000000000\n}',
    );
    expect(parseTag(text, 'tag/tag-a')).toEqual(tag);
  });

  it('reads LocalDateTime arrays with seconds/nanos omitted and durations with fractions', () => {
    const text = serializeTag(tag)
      .replace('[ 2024, 3, 5, 10, 20, 30, 123456789 ]', '[ 2024, 3, 5, 10, 20 ]')
      .replace('4.000000000', '86400.500000000');
    const t = parseTag(text, 'tag/tag-a');
    expect(t.tagCreateTime).toEqual({ millis: Date.UTC(2024, 2, 5, 10, 20), nanoOfMillis: 0 });
    expect(t.tagTimeRetained).toEqual({ seconds: 86400, nanos: 500000000 });
    // Jackson omits zero seconds/nanos when writing, too.
    expect(serializeTag(t)).toContain('"tagCreateTime" : [ 2024, 3, 5, 10, 20 ],\n  "tagTimeRetained" : 86400.500000000');
  });

  it('prints sub-microsecond durations like BigDecimal.toString', () => {
    const text = serializeTag({ ...tag, tagTimeRetained: { seconds: 0, nanos: 1 } });
    expect(text).toContain('"tagTimeRetained" : 1E-9');
    expect(parseTag(text, 't').tagTimeRetained).toEqual({ seconds: 0, nanos: 1 });
  });

  it('accepts a tag without the optional tag members', () => {
    const { tagCreateTime: _a, tagTimeRetained: _b, ...plain } = tag;
    const text = serializeTag(plain);
    expect(text).not.toContain('tag');
    expect(parseTag(text, 't')).toEqual(plain);
  });
});
