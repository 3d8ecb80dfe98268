/**
 * Java's `MergeFunction` contract over materialized records: `reset()`, `add(kv)` for each record
 * of one key in merge order, `getResult()`. It delegates to the same {@link KeyMerger} that reads,
 * the write buffer and compaction use, so all of them merge alike.
 */
import type { TableSchema, Value } from '@tidemark/format';
import { canonical } from '../../read/aggregated-columns.js';
import type { AggregationInput, ElementRef } from '../../read/aggregate-functions.js';
import { KeyMerger, mergeEngineOptions, type KeyValueRecord, type MergeEngineOptions } from '../../read/merge-engine.js';
import type { WriteValue } from '../value-conversion.js';
import type { KeyValue } from './key-value.js';
import type { RowKindValue } from './row-kind.js';

/** Merges the records of one key. */
export interface MergeFunction {
  /** Starts a new key. */
  reset(): void;
  /** Adds the next record of the key (in merge order: `sequence.field`, then sequence number). */
  add(kv: KeyValue): void;
  /**
   * The merged record, with the row kind a writer stores (a -D result keeps deleting older data;
   * reads drop -U/-D results), or null when nothing is left (e.g. only ignored retractions).
   */
  getResult(): KeyValue | null;
}

/**
 * The merge function of a primary-key table's merge engine (`merge-engine`, `ignore-delete`,
 * `*.remove-record-on-delete`, `sequence.field`, partial-update sequence groups, aggregate
 * functions). Values are in schema order.
 */
export function createMergeFunction(schema: TableSchema, options: MergeEngineOptions = mergeEngineOptions(schema)): MergeFunction {
  const fields = schema.fields;
  const seqIdx = (options.sequenceFields ?? []).map((n) => fields.findIndex((f) => f.name === n));
  let kvs: KeyValue[] = [];
  const cell = (r: KeyValueRecord, c: number): WriteValue => kvs[r.chunk]!.value[c] ?? null;
  const input: AggregationInput = {
    isNull: (r, c) => cell(r, c) === null,
    value: (r, c) => cell(r, c) as Value,
    elements(r, c): ElementRef[] {
      const v = cell(r, c) as readonly WriteValue[];
      const isMap = fields[c]!.type.root === 'MAP' || fields[c]!.type.root === 'MULTISET';
      return v.map((e, index) => ({ chunk: r.chunk, index, id: canonical(isMap ? (e as readonly WriteValue[])[0] : e) }));
    },
  };
  const merger = new KeyMerger(options, { names: fields.map((f) => f.name), types: fields.map((f) => f.type), input });
  return {
    reset(): void {
      kvs = [];
    },
    add(kv: KeyValue): void {
      kvs.push(kv);
    },
    getResult(): KeyValue | null {
      const records: KeyValueRecord[] = kvs.map((kv, i) => ({
        key: kv.key,
        sequence: kv.sequence,
        kind: kv.rowKind,
        chunk: i,
        row: 0,
        ...(seqIdx.length > 0 ? { userSequence: seqIdx.map((c) => (kv.value[c] ?? null) as Value) } : {}),
      }));
      const merged = merger.merge(records, 0, records.length);
      if (merged === null) return null;
      const base = kvs[merged.record.chunk]!;
      let value: readonly WriteValue[];
      if (merged.columnSources) {
        value = merged.columnSources.map((src, c) => (src === null ? null : (kvs[src.chunk]!.value[c] ?? null)));
      } else if (merged.cells) {
        value = merged.cells.map((x, c) => {
          if (x === null) return null;
          if ('ref' in x) return kvs[x.ref.chunk]!.value[c] ?? null;
          if ('value' in x) return x.value;
          return x.elements.map((e) => (kvs[e.chunk]!.value[c] as readonly WriteValue[])[e.index]!);
        });
      } else value = base.value;
      return { key: base.key, sequence: merged.sequence, rowKind: merged.kind as RowKindValue, value };
    },
  };
}
