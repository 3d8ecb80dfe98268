/**
 * Splitting the files of a compaction into sections: groups of files whose key ranges overlap
 * (directly or through other files), ordered by key. Sections never share a key, so each can be
 * merged on its own and a section of one file needs no merge at all. Within a section the files
 * are packed into as few sorted runs as possible (a file joins the run whose last file ends
 * before it starts), which bounds how many files a merge reads at once.
 */
import type { DataFileMeta } from '@tidemark/format';
import { SortedRun, type KeyComparator } from './sorted-run.js';

/** Sections in key order; each a list of sorted runs. */
export function intervalPartition(files: readonly DataFileMeta[], compare: KeyComparator): SortedRun[][] {
  const sorted = [...files].sort((a, b) => compare(a.minKey, b.minKey) || compare(a.maxKey, b.maxKey));
  const sections: SortedRun[][] = [];
  let section: DataFileMeta[] = [];
  let bound: Uint8Array | null = null;
  for (const f of sorted) {
    if (section.length > 0 && bound !== null && compare(f.minKey, bound) > 0) {
      sections.push(packRuns(section, compare));
      section = [];
      bound = null;
    }
    section.push(f);
    if (bound === null || compare(f.maxKey, bound) > 0) bound = f.maxKey;
  }
  if (section.length > 0) sections.push(packRuns(section, compare));
  return sections;
}

/** Packs files (sorted by min key) into the fewest sorted runs, greedily by earliest-ending run. */
function packRuns(files: readonly DataFileMeta[], compare: KeyComparator): SortedRun[] {
  const runs: DataFileMeta[][] = [];
  for (const f of files) {
    // The run ending first is the best candidate: if it does not fit, no run does.
    let best = -1;
    for (let i = 0; i < runs.length; i++) {
      const last = runs[i]![runs[i]!.length - 1]!;
      if (best === -1 || compare(last.maxKey, runs[best]![runs[best]!.length - 1]!.maxKey) < 0) best = i;
    }
    if (best !== -1 && compare(runs[best]![runs[best]!.length - 1]!.maxKey, f.minKey) < 0) runs[best]!.push(f);
    else runs.push([f]);
  }
  return runs.map((r) => SortedRun.fromSorted(r));
}
