// The frame of a worker child process that writes to a table: its configuration (one JSON
// argument), a FileIO (S3 when the configuration names a server), the stack of a failure on stderr
// and the exit code. Imports the packages from dist (build first).
import { LocalFileIO, S3FileIO } from '@tidemark/storage';

/** Runs `body(config, io)`, closes the FileIO and exits: 0, or 1 when the body threw. */
export async function workerMain(body) {
  const config = JSON.parse(process.argv[2] ?? '{}');
  const io = config.s3 ? new S3FileIO(config.s3) : new LocalFileIO();
  let failed = false;
  try {
    await body(config, io);
  } catch (e) {
    failed = true;
    process.stderr.write(`${e?.stack ?? e}\n`);
  } finally {
    await io.close();
  }
  // The shared Parquet encode workers would keep the process alive.
  process.stdout.write('', () => process.exit(failed ? 1 : 0));
}
