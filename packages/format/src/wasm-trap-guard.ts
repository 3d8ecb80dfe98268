/**
 * Turns a parquet-wasm trap into an error of the read that caused it.
 *
 * parquet-wasm's async reader resumes its Rust futures from microtasks; a Rust panic there (a
 * `RuntimeError: unreachable`, e.g. on a damaged page header) is thrown from that microtask, not
 * from the promise the caller awaits: it surfaces as an uncaught exception and the read never
 * settles. While guarded reads are in flight, a listener that runs before any other catches such a
 * trap, rejects the reads with {@link CorruptFileError} naming their files, and marks the error as
 * handled (`WASM_TRAP_HANDLED`) so that process-level crash handlers can leave it alone.
 */
import { CorruptFileError, FormatError } from './errors.js';

/** Set to true on an uncaught error this guard turned into a rejected read. */
export const WASM_TRAP_HANDLED = Symbol.for('tidemark.wasmTrapHandled');

interface Guarded {
  readonly path: string;
  readonly reject: (e: Error) => void;
}

/** `WebAssembly.RuntimeError` (the lib settings of this package do not declare `WebAssembly`). */
const WasmRuntimeError = (globalThis as unknown as { WebAssembly: { RuntimeError: abstract new () => Error } }).WebAssembly.RuntimeError;

const inFlight = new Set<Guarded>();
let listening = false;
/** The first trap: a trapped wasm instance may be in any state, so it is not used again. */
let trapped: { readonly path: string; readonly error: Error } | undefined;

function onUncaught(err: unknown): void {
  if (!(err instanceof WasmRuntimeError) || inFlight.size === 0) {
    if (process.listenerCount('uncaughtException') > 1) return; // another handler decides
    // No one else listens: behave as if this listener did not exist (print and exit 1).
    stopListening();
    process.nextTick(() => {
      throw err;
    });
    return;
  }
  const reads = [...inFlight];
  const files = reads.map((r) => r.path);
  trapped = { path: files.join(', '), error: err };
  (err as unknown as Record<symbol, boolean>)[WASM_TRAP_HANDLED] = true;
  inFlight.clear();
  stopListening();
  for (const r of reads) {
    const others = files.length > 1 ? ` (one of ${files.length} files decoded at that moment: ${files.join(', ')})` : '';
    r.reject(new CorruptFileError(r.path, `the Parquet decoder crashed on this file${others}: ${err.message}`, { cause: err }));
  }
}

function stopListening(): void {
  if (!listening) return;
  process.off('uncaughtException', onUncaught);
  listening = false;
}

/**
 * Runs `read` (a parquet-wasm call on `path`) so that a wasm trap rejects it with a
 * {@link CorruptFileError} instead of escaping as an uncaught exception.
 *
 * @throws FormatError when an earlier read trapped in this process (its wasm state is not trusted).
 */
export function guardWasmRead<T>(path: string, read: () => Promise<T>): Promise<T> {
  if (trapped) {
    return Promise.reject(
      new FormatError(
        `the Parquet decoder crashed earlier in this process (on ${trapped.path}: ${trapped.error.message}); restart the process to read ${path}`,
      ),
    );
  }
  return new Promise<T>((resolve, reject) => {
    const entry: Guarded = { path, reject };
    inFlight.add(entry);
    if (!listening) {
      // First in line, so that a crash handler of the application sees the trap already handled.
      process.prependListener('uncaughtException', onUncaught);
      listening = true;
    }
    const done = (): void => {
      inFlight.delete(entry);
      if (inFlight.size === 0) stopListening();
    };
    let p: Promise<T>;
    try {
      p = read();
    } catch (e) {
      done();
      reject(e instanceof Error ? e : new Error(String(e)));
      return;
    }
    p.then(
      (v) => {
        done();
        resolve(v);
      },
      (e: unknown) => {
        done();
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
