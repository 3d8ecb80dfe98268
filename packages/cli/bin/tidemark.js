#!/usr/bin/env node
import { main } from '../dist/main.js';

// The process ends when the command is done, whatever it leaves behind: a worker, socket or timer
// that a failed command did not tear down must not keep a cron job hanging. stdout and stderr are
// flushed first (pipes and files are written synchronously on POSIX, TTYs are not everywhere).
function exit(code) {
  let waiting = 2;
  const done = () => {
    if (--waiting === 0) process.exit(code);
  };
  for (const stream of [process.stdout, process.stderr]) {
    if (stream.destroyed || stream.writableEnded) done();
    else stream.write('', done);
  }
  // A reader that stopped reading must not hold the exit up either.
  setTimeout(() => process.exit(code), 2000).unref();
}

// Anything that escapes the command (a rejection nobody awaited, an exception in a callback) ends
// the process with one clear line instead of leaving it alive or half-reported.
function crash(kind, err) {
  // A Parquet decoder trap that @tidemark/format turned into a failed read of a named file.
  if (err?.[Symbol.for('tidemark.wasmTrapHandled')]) return;
  // The reader of our stdout went away (`tidemark read … | head`): not a failure.
  if (err?.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  const debug = process.env.TIDEMARK_DEBUG === '1';
  const text = err instanceof Error ? (debug && err.stack ? err.stack : err.message) : String(err);
  try {
    process.stderr.write(
      `tidemark: unexpected error (${kind}): ${text}${debug ? '' : '\n(set TIDEMARK_DEBUG=1 to print the stack trace)'}\n`,
    );
  } finally {
    process.exit(1);
  }
}
process.on('uncaughtException', (err) => crash('uncaught exception', err));
process.on('unhandledRejection', (err) => crash('unhandled rejection', err));

main(process.argv.slice(2)).then(exit, (err) => {
  process.stderr.write(`tidemark: ${err instanceof Error ? err.message : String(err)}\n`);
  exit(1);
});
