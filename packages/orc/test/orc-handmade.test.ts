/**
 * A small ORC file built byte by byte here (protobuf tail, RLE v1 streams), for what the ORC
 * project's example files do not hold: TIMESTAMP_INSTANT (UTC) next to TIMESTAMP in a writer zone
 * with daylight saving time, VARCHAR with multi-byte UTF-8, a pre-1970 instant with a fraction, and
 * the paimon.id type attributes Java Paimon writes.
 */
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';

import { bytesSource, OrcReader } from '../src/index.js';

const schema = protobuf.parse(`
syntax = "proto2";
message Stream { optional uint32 kind = 1; optional uint32 column = 2; optional uint64 length = 3; }
message ColumnEncoding { optional uint32 kind = 1; }
message StripeFooter { repeated Stream streams = 1; repeated ColumnEncoding columns = 2; optional string writerTimezone = 3; }
message StringPair { optional string key = 1; optional string value = 2; }
message Type { optional uint32 kind = 1; repeated uint32 subtypes = 2 [packed = true]; repeated string fieldNames = 3;
  optional uint32 maximumLength = 4; repeated StringPair attributes = 7; }
message StripeInformation { optional uint64 offset = 1; optional uint64 indexLength = 2; optional uint64 dataLength = 3;
  optional uint64 footerLength = 4; optional uint64 numberOfRows = 5; }
message Footer { optional uint64 headerLength = 1; optional uint64 contentLength = 2; repeated StripeInformation stripes = 3;
  repeated Type types = 4; optional uint64 numberOfRows = 6; optional uint32 rowIndexStride = 8; }
message PostScript { optional uint64 footerLength = 1; optional uint32 compression = 2; repeated uint32 version = 4 [packed = true];
  optional uint64 metadataLength = 5; optional string magic = 8000; }
`).root;

const encode = (name: string, value: object): Uint8Array => {
  const type = schema.lookupType(name);
  return type.encode(type.fromObject(value)).finish();
};

function varint(n: bigint): number[] {
  const out: number[] = [];
  let v = n;
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) b |= 0x80;
    out.push(b);
  } while (v > 0n);
  return out;
}
const zigzag = (n: bigint): bigint => (n >= 0n ? n * 2n : -n * 2n - 1n);
/** Integer RLE v1 literals. */
const literals = (values: bigint[], signed: boolean): number[] => [
  0x100 - values.length,
  ...values.flatMap((v) => varint(signed ? zigzag(v) : v)),
];

interface StreamSpec {
  readonly column: number;
  readonly kind: number;
  readonly bytes: number[];
}

function orcFile(rows: number, types: object[], streams: StreamSpec[], writerTimezone: string): Uint8Array {
  const data = streams.flatMap((s) => s.bytes);
  const stripeFooter = encode('StripeFooter', {
    streams: streams.map((s) => ({ kind: s.kind, column: s.column, length: s.bytes.length })),
    columns: types.map(() => ({ kind: 0 })),
    writerTimezone,
  });
  const footer = encode('Footer', {
    headerLength: 3,
    contentLength: data.length + stripeFooter.length,
    stripes: [{ offset: 3, indexLength: 0, dataLength: data.length, footerLength: stripeFooter.length, numberOfRows: rows }],
    types,
    numberOfRows: rows,
    rowIndexStride: 0,
  });
  const postScript = encode('PostScript', {
    footerLength: footer.length,
    compression: 0,
    version: [0, 12],
    metadataLength: 0,
    magic: 'ORC',
  });
  return Uint8Array.from([...Buffer.from('ORC'), ...data, ...stripeFooter, ...footer, ...postScript, postScript.length]);
}

const ORC_EPOCH = 1420070400n;
const PRESENT = 0;
const DATA = 1;
const LENGTH = 2;
const SECONDARY = 5;

describe('a handmade ORC file', () => {
  // Column 1 TIMESTAMP_INSTANT (with a null), 2 VARCHAR(5), 3 TIMESTAMP written in America/New_York.
  const instantSecs = [1622548800n - ORC_EPOCH, -1n - ORC_EPOCH, 0n - ORC_EPOCH];
  // 123456789 ns has no trailing zeros; 250000000 = 25 * 10^7 is stored as 25 with code 7 - 1.
  const instantNanos = [123456789n << 3n, (25n << 3n) | 6n, 0n];
  const nyBase = ORC_EPOCH + 5n * 3600n; // 2015-01-01 00:00 in New York (UTC-5)
  const wallInstants = [1625405400n, 1609770600n, 1625405400n, 1609770600n]; // 2021-07-04 13:30Z (EDT), 2021-01-04 14:30Z (EST)
  const strings = ['héllo', '', 'a', 'bc'];
  const file = orcFile(
    4,
    [
      { kind: 12, subtypes: [1, 2, 3], fieldNames: ['instant', 'name', 'local'] },
      { kind: 18, attributes: [{ key: 'paimon.id', value: '7' }] },
      { kind: 16, maximumLength: 5, attributes: [{ key: 'paimon.id', value: '8' }] },
      { kind: 9, attributes: [{ key: 'paimon.id', value: '9' }] },
    ],
    [
      { column: 1, kind: PRESENT, bytes: [0xff, 0b11010000] },
      { column: 1, kind: DATA, bytes: literals(instantSecs, true) },
      { column: 1, kind: SECONDARY, bytes: literals(instantNanos, false) },
      { column: 2, kind: DATA, bytes: [...Buffer.from(strings.join(''), 'utf8')] },
      {
        column: 2,
        kind: LENGTH,
        bytes: literals(
          strings.map((s) => BigInt(Buffer.byteLength(s))),
          false,
        ),
      },
      {
        column: 3,
        kind: DATA,
        bytes: literals(
          wallInstants.map((i) => i - nyBase),
          true,
        ),
      },
      { column: 3, kind: SECONDARY, bytes: literals([0n, 0n, 0n, 0n], false) },
    ],
    'America/New_York',
  );

  it('decodes instants in UTC, wall-clock timestamps in the writer zone, UTF-8 varchars and paimon.id attributes', async () => {
    const reader = await OrcReader.open(bytesSource(file), 'handmade.orc');
    expect(reader.schema.fields.map((f) => [f.name, String(f.type), f.metadata.get('paimon.id')])).toEqual([
      ['instant', 'Timestamp<NANOSECOND, UTC>', '7'],
      ['name', 'Utf8', '8'],
      ['local', 'Timestamp<NANOSECOND>', '9'],
    ]);
    const batches = [];
    for await (const b of reader.readBatches()) batches.push(b);
    expect(batches.length).toBe(1);
    const batch = batches[0]!;
    const instant = batch.getChild('instant')!;
    expect([0, 1, 2, 3].map((i) => (instant.isValid(i) ? (instant.data[0]!.values as BigInt64Array)[i] : null))).toEqual([
      1622548800123456789n,
      // -1.75 s: written as -1 s (millis truncated towards zero) + 0.25 s, read one second earlier.
      -1750000000n,
      null,
      0n,
    ]);
    expect(batch.getChild('name')!.toArray()).toEqual(strings);
    const local = batch.getChild('local')!.data[0]!.values as BigInt64Array;
    // 09:30 on both dates: EDT in July, EST in January.
    expect([...local].map((ns) => new Date(Number(ns / 1_000_000n)).toISOString())).toEqual([
      '2021-07-04T09:30:00.000Z',
      '2021-01-04T09:30:00.000Z',
      '2021-07-04T09:30:00.000Z',
      '2021-01-04T09:30:00.000Z',
    ]);
  });

  it('a stream shorter than its rows fails naming the file, stripe and column', async () => {
    const broken = orcFile(
      4,
      [{ kind: 12, subtypes: [1], fieldNames: ['n'] }, { kind: 3 }],
      [{ column: 1, kind: DATA, bytes: literals([1n, 2n], true) }],
      '',
    );
    const reader = await OrcReader.open(bytesSource(broken), 'short.orc');
    await expect(
      (async () => {
        for await (const _ of reader.readBatches()) void _;
      })(),
    ).rejects.toThrow(/short\.orc: stripe 0: column 1 DATA: stream ends early/);
  });
});
