/**
 * A table definition with every Paimon type tidemark writes, and rows in the canonical form of
 * arrow-canon.ts (hand-written exact values: extremes, NaN/±Infinity, pre-1970 and year 1/9999
 * dates and timestamps, unicode, empty values, nulls everywhere nullable). Shared by the write
 * round-trip and DuckDB suites.
 */
import type { TableSpec } from '@tidemark/core';
import type { CanonRow } from './arrow-canon.js';

export const ALL_TYPES: TableSpec = {
  fields: [
    { name: 'id', type: 'INT NOT NULL' },
    { name: 'b', type: 'BOOLEAN' },
    { name: 'i8', type: 'TINYINT' },
    { name: 'i16', type: 'SMALLINT' },
    { name: 'i32', type: 'INT' },
    { name: 'i64', type: 'BIGINT' },
    { name: 'f32', type: 'FLOAT' },
    { name: 'f64', type: 'DOUBLE' },
    { name: 'd9', type: 'DECIMAL(9, 2)' },
    { name: 'd18', type: 'DECIMAL(18, 4)' },
    { name: 'd38', type: 'DECIMAL(38, 10)' },
    { name: 'c', type: 'CHAR(5)' },
    { name: 'vc', type: 'VARCHAR(10)' },
    { name: 's', type: 'STRING' },
    { name: 'bin', type: 'BINARY(4)' },
    { name: 'vbin', type: 'VARBINARY(8)' },
    { name: 'bytes', type: 'BYTES' },
    { name: 'dt', type: 'DATE' },
    { name: 't0', type: 'TIME' },
    { name: 't3', type: 'TIME(3)' },
    { name: 'ts0', type: 'TIMESTAMP(0)' },
    { name: 'ts3', type: 'TIMESTAMP(3)' },
    { name: 'ts6', type: 'TIMESTAMP(6)' },
    { name: 'ts9', type: 'TIMESTAMP(9)' },
    { name: 'ltz3', type: 'TIMESTAMP(3) WITH LOCAL TIME ZONE' },
    { name: 'ltz6', type: 'TIMESTAMP(6) WITH LOCAL TIME ZONE' },
    { name: 'ltz9', type: 'TIMESTAMP(9) WITH LOCAL TIME ZONE' },
    { name: 'arr', type: 'ARRAY<INT>' },
    { name: 'arrs', type: 'ARRAY<STRING>' },
    { name: 'nested', type: 'ARRAY<ARRAY<BIGINT>>' },
    { name: 'm', type: 'MAP<STRING, BIGINT>' },
    { name: 'mi', type: 'MAP<INT, ARRAY<STRING>>' },
    { name: 'r', type: 'ROW<x INT NOT NULL, y STRING, z DECIMAL(10, 2), w TIMESTAMP(6)>' },
    { name: 'rr', type: 'ROW<inner ROW<a BOOLEAN>, list ARRAY<DOUBLE>>' },
    { name: 'arow', type: 'ARRAY<ROW<k STRING, v DOUBLE>>' },
  ],
};

export const I64_MAX = 2n ** 63n - 1n;
const FLOAT_MAX = 3.4028234663852886e38; // largest finite float32
export const DAY_MS = 86_400_000;
// 9999-12-31 23:59:59 and 0001-01-01 00:00:00 UTC, in epoch seconds.
const S_9999 = 253402300799n;
const S_0001 = -62135596800n;
export const bytes = (...b: number[]): Uint8Array => new Uint8Array(b);

/** Canonical rows; every one is also a valid row-object input. Missing columns are NULL. */
export const TYPE_ROWS: CanonRow[] = [
  {
    id: 1, b: true, i8: 127, i16: 32767, i32: 2147483647, i64: I64_MAX, f32: FLOAT_MAX, f64: Number.MAX_VALUE,
    d9: '9999999.99', d18: '99999999999999.9999', d38: '9999999999999999999999999999.9999999999',
    c: 'abcde', vc: '🙂🙂🙂🙂🙂中文abc', s: 'x'.repeat(5000) + '🙂', bin: bytes(0, 1, 254, 255),
    vbin: bytes(1, 2, 3, 4, 5, 6, 7, 8), bytes: Uint8Array.from({ length: 256 }, (_, i) => i),
    dt: 2932896, t0: 86_399_000, t3: DAY_MS - 1,
    ts0: S_9999 * 1000n, ts3: S_9999 * 1000n + 999n, ts6: S_9999 * 1_000_000n + 999_999n, ts9: I64_MAX,
    ltz3: S_9999 * 1000n + 999n, ltz6: S_9999 * 1_000_000n + 999_999n, ltz9: I64_MAX,
    arr: [2147483647, -2147483648], arrs: ['a', '', '中文'], nested: [[1n], [2n, -I64_MAX]],
    m: [['k', I64_MAX], ['ü', -1n]], mi: [[1, ['x', 'y']], [2, []]],
    r: { x: 1, y: 'y', z: '99999999.99', w: S_9999 * 1_000_000n + 999_999n },
    rr: { inner: { a: true }, list: [1.5, -0] }, arow: [{ k: 'a', v: 1 }, { k: 'b', v: Number.NaN }],
  },
  {
    id: 2, b: false, i8: -128, i16: -32768, i32: -2147483648, i64: -(2n ** 63n), f32: -FLOAT_MAX, f64: -Number.MAX_VALUE,
    d9: '-9999999.99', d18: '-99999999999999.9999', d38: '-9999999999999999999999999999.9999999999',
    c: '', vc: '', s: '', bin: bytes(0, 0, 0, 0), vbin: bytes(), bytes: bytes(),
    dt: -719162, t0: 0, t3: 0,
    ts0: S_0001 * 1000n, ts3: S_0001 * 1000n, ts6: S_0001 * 1_000_000n, ts9: -I64_MAX,
    ltz3: S_0001 * 1000n, ltz6: S_0001 * 1_000_000n, ltz9: -I64_MAX,
    arr: [], arrs: [], nested: [], m: [], mi: [],
    r: { x: -1, y: null, z: '-99999999.99', w: null }, rr: { inner: null, list: null }, arow: [],
  },
  {
    id: 3, b: null, i8: 0, i16: 0, i32: 0, i64: 0n, f32: Number.NaN, f64: Number.NaN,
    d9: '0.00', d18: '-0.0001', d38: '0.0000000001',
    c: 'é🙂', vc: 'Zoë', s: 'line\nbreak\u0000nul "q" \\ 🙂 中文', bin: null, vbin: bytes(255), bytes: bytes(0),
    dt: -1, t0: 1000, t3: 1,
    ts0: -1000n, ts3: -1n, ts6: -1n, ts9: -1n, ltz3: -1n, ltz6: -1n, ltz9: -1n,
    arr: [null, 0, null], arrs: [null], nested: [null, []], m: [['a', null], ['', 0n]], mi: [[0, null]],
    r: { x: 0, y: '', z: '0.00', w: -1n }, rr: { inner: { a: null }, list: [null] }, arow: [null, { k: null, v: null }],
  },
  {
    // Infinities and ordinary pre-1970 values (1969-07-20 20:17:40.123456, 1900-01-01 …).
    id: 4, b: true, i8: -1, i16: 1, i32: -1, i64: -1n, f32: Number.POSITIVE_INFINITY, f64: Number.NEGATIVE_INFINITY,
    d9: '-0.01', d18: '1.5000', d38: '-1.0000000000', c: 'a', vc: 'b', s: 'Apple', bin: bytes(9, 9, 9, 9), vbin: bytes(0), bytes: bytes(1, 2),
    dt: -25567, t0: 45_296_000, t3: 45_296_789,
    ts0: -2208988800000n, ts3: -315619199500n, ts6: -14182939876544n, ts9: -2208988799999999999n,
    ltz3: -315619199500n, ltz6: -14182939876544n, ltz9: -2208988799999999999n,
    arr: [7], arrs: ['z'], nested: [[0n]], m: [['k', 0n]], mi: [[-1, [null, 'n']]],
    r: null, rr: null, arow: null,
  },
  { id: 5, f32: Number.NEGATIVE_INFINITY, f64: Number.POSITIVE_INFINITY },
  { id: 6, f32: 1.401298464324817e-45, f64: -0 }, // smallest float32 subnormal; negative zero
  { id: 7 }, // NULL in every nullable column
];

/** The rows with every column present (NULL where a row leaves a column out). */
export function withNulls(fields: readonly { name: string }[], rows: readonly CanonRow[]): CanonRow[] {
  return rows.map((r) => Object.fromEntries(fields.map((f) => [f.name, r[f.name] ?? null])));
}
