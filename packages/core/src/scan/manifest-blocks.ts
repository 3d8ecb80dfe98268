/**
 * The manifests of a plan as one stream of pieces to fold, in manifest order: decompressed Avro
 * blocks with the walker of their writer schema, or decoded entries for manifests the walker
 * cannot follow (ORC manifests, writer schemas it does not know). Manifest bytes are fetched
 * ahead, and blocks are decompressed ahead of the fold (zstd runs off the main thread while the
 * fold walks the block before), so neither waits on the other while both have work.
 */
import {
  ByteArena,
  ManifestEntryWalker,
  decodeManifestEntryBatches,
  isOrc,
  readAvroBlocks,
  type AvroBlock,
  type ManifestEntry,
  type ManifestFileMeta,
} from '@tidemark/format';

/**
 * Manifests whose bytes are fetched at once, ahead of the one being folded: on an object store
 * planning is otherwise one round trip per manifest in a row. Bounds the bytes held to this many
 * manifests (each at most `manifest.target-file-size`, 8 MiB by default, usually far less).
 */
const MANIFEST_WINDOW = 8;

/**
 * Pieces decompressed or decoded ahead of the fold. Blocks are tens of KiB decompressed, so this
 * bounds the memory ahead to a few hundred KiB while keeping the zstd thread busy.
 */
const PIECES_AHEAD = 4;

/** One piece of a manifest: a block to walk, or decoded entries. */
export type ManifestPiece =
  | { readonly meta: ManifestFileMeta; readonly path: string; readonly walker: ManifestEntryWalker; readonly block: AvroBlock }
  | { readonly meta: ManifestFileMeta; readonly path: string; readonly walker: null; readonly entries: readonly ManifestEntry[] };

/**
 * The pieces of `metas` in order, read with `read` (by manifest file name) from `pathOf(name)`.
 * Stopping early waits for the reads and decompression in flight.
 */
export function manifestPieces(
  metas: readonly ManifestFileMeta[],
  read: (fileName: string) => Promise<Uint8Array>,
  pathOf: (fileName: string) => string,
): AsyncIterable<ManifestPiece> {
  return ahead(pieces(metas, read, pathOf), PIECES_AHEAD);
}

async function* pieces(
  metas: readonly ManifestFileMeta[],
  read: (fileName: string) => Promise<Uint8Array>,
  pathOf: (fileName: string) => string,
): AsyncGenerator<ManifestPiece> {
  const reads: Array<Promise<Uint8Array>> = [];
  let nextRead = 0;
  const fill = (): void => {
    while (nextRead < metas.length && reads.length < MANIFEST_WINDOW) {
      const p = read(metas[nextRead++]!.fileName);
      p.catch(() => undefined); // awaited in order below
      reads.push(p);
    }
  };
  try {
    for (const meta of metas) {
      fill();
      const bytes = await reads.shift()!;
      const path = pathOf(meta.fileName);
      let walker: ManifestEntryWalker | null | undefined = isOrc(bytes) ? null : undefined;
      if (walker === undefined) {
        for await (const block of readAvroBlocks(bytes, { path })) {
          walker ??= ManifestEntryWalker.forHeader(block.header);
          if (walker === null) break;
          yield { meta, path, walker, block };
        }
      }
      if (walker === null) {
        // Entries keep no view of the manifest bytes: their byte fields go to an arena.
        const options = { copyBytes: false, lazyStats: true, arena: new ByteArena() };
        for await (const entries of decodeManifestEntryBatches(bytes, path, options)) yield { meta, path, walker: null, entries };
      }
    }
  } finally {
    await Promise.allSettled(reads);
  }
}

/** Pulls up to `n` items of `source` ahead of the consumer. */
async function* ahead<T>(source: AsyncGenerator<T>, n: number): AsyncGenerator<T> {
  const pending: Array<Promise<IteratorResult<T>>> = [];
  const pull = (): void => {
    const p = source.next();
    p.catch(() => undefined); // awaited in order below
    pending.push(p);
  };
  try {
    for (let i = 0; i < n; i++) pull();
    for (;;) {
      const r = await pending.shift()!;
      if (r.done === true) return;
      pull();
      yield r.value;
    }
  } finally {
    // The generator runs its pulls one after another: wait for them before closing it.
    await Promise.allSettled(pending);
    await source.return(undefined);
  }
}
