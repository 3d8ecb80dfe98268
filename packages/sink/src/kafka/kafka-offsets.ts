/**
 * Offsets and partition assignment of the Kafka source.
 *
 * The source offset is `{ "<topic>": { "<partition>": <next offset> } }` for every partition the
 * pipeline reads. A message that turns into several records (a CDC update: `-U` then `+U`; a canal
 * event of several rows) gives the records before its last one `{ "offset": <its offset>, "skip":
 * <records already handed out> }` instead of a number, so a checkpoint between them resumes with
 * exactly the missing records.
 */
import type { SourceOffset } from '../checkpoint-state.js';
import { SourceError } from '../errors.js';
import { KafkaSettingsError } from './kafka-errors.js';

/** Which partitions of each topic one pipeline reads. */
export type KafkaAssignment =
  | { readonly kind: 'all' }
  | { readonly kind: 'partitions'; readonly partitions: readonly number[] }
  /** Partition p of every topic when p mod `count` = `index` (scale-out over `count` processes). */
  | { readonly kind: 'split'; readonly index: number; readonly count: number };

/** Whether `partition` is this pipeline's. */
export function assigned(assignment: KafkaAssignment, partition: number): boolean {
  switch (assignment.kind) {
    case 'all':
      return true;
    case 'partitions':
      return assignment.partitions.includes(partition);
    case 'split':
      return partition % assignment.count === assignment.index;
  }
}

/** The assignment as the source id shows it (`""` for all partitions). */
export function assignmentLabel(assignment: KafkaAssignment): string {
  switch (assignment.kind) {
    case 'all':
      return '';
    case 'partitions':
      return `#partitions=${[...assignment.partitions].sort((a, b) => a - b).join(',')}`;
    case 'split':
      return `#split=${assignment.index}/${assignment.count}`;
  }
}

/** Parses `--partitions 0,1,5`. */
export function parsePartitionList(text: string, what = '--partitions'): KafkaAssignment {
  const parts = text.split(',').map((p) => p.trim());
  const partitions = parts.map((p) => Number(p));
  if (parts.some((p) => !/^\d+$/.test(p)) || partitions.some((p) => !Number.isSafeInteger(p))) {
    throw new KafkaSettingsError(`${what} '${text}' must be a comma-separated list of partition numbers, e.g. 0,1,5`);
  }
  if (new Set(partitions).size !== partitions.length) throw new KafkaSettingsError(`${what} '${text}' names a partition twice`);
  return { kind: 'partitions', partitions };
}

/** Parses `--split i/N` (0 ≤ i < N). */
export function parseSplit(text: string, what = '--split'): KafkaAssignment {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || count < 1 || index >= count) {
    throw new KafkaSettingsError(`${what} '${text}' must be i/N with 0 <= i < N (process i of N), e.g. 0/2`);
  }
  return { kind: 'split', index, count };
}

/** Where a partition is read from: the next message, and how many of its records were already handed out. */
export interface PartitionPosition {
  next: number;
  skip: number;
}

/** Positions of every partition read, by topic then partition. */
export type PositionMap = Map<string, Map<number, PartitionPosition>>;

/** The positions as a {@link SourceOffset} (a fresh object: the caller may keep it). */
export function offsetOf(positions: PositionMap): SourceOffset {
  const out: Record<string, Record<string, SourceOffset>> = {};
  for (const [topic, parts] of positions) {
    const t: Record<string, SourceOffset> = {};
    for (const [p, pos] of parts) t[p] = pos.skip === 0 ? pos.next : { offset: pos.next, skip: pos.skip };
    out[topic] = t;
  }
  return out;
}

/**
 * Reads a stored offset back.
 *
 * @throws SourceError when it is not an offset of this source (wrong shape, another topic).
 */
export function parseOffset(offset: SourceOffset, topics: readonly string[], sourceId: string): PositionMap {
  const bad = (why: string): SourceError =>
    new SourceError(`offset ${JSON.stringify(offset)} is not an offset of Kafka source ${sourceId}: ${why}`);
  if (offset === null || typeof offset !== 'object' || Array.isArray(offset))
    throw bad('expected { "<topic>": { "<partition>": <offset> } }');
  const out: PositionMap = new Map();
  for (const [topic, parts] of Object.entries(offset as Record<string, SourceOffset>)) {
    if (!topics.includes(topic)) throw bad(`topic ${topic} is not one of ${topics.join(', ')}`);
    if (parts === null || typeof parts !== 'object' || Array.isArray(parts)) throw bad(`topic ${topic} has no partition map`);
    const m = new Map<number, PartitionPosition>();
    for (const [p, v] of Object.entries(parts as Record<string, SourceOffset>)) {
      const partition = Number(p);
      if (!/^\d+$/.test(p) || !Number.isSafeInteger(partition)) throw bad(`'${p}' is not a partition number`);
      if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) {
        m.set(partition, { next: v, skip: 0 });
        continue;
      }
      const o = v as Record<string, unknown> | null;
      if (o !== null && typeof o === 'object' && Number.isSafeInteger(o['offset']) && Number.isSafeInteger(o['skip'])) {
        m.set(partition, { next: o['offset'] as number, skip: o['skip'] as number });
        continue;
      }
      throw bad(`the position of ${topic}/${p} must be an offset or { "offset", "skip" }`);
    }
    out.set(topic, m);
  }
  return out;
}
