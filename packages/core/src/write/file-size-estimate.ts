/**
 * The estimate that rolls data files at `target-file-size`, shared by the append writer and the
 * key-value file writer (Java's `RollingFileWriter` asks the open file for its size; here files are
 * encoded off this thread in one go, so the Arrow bytes of the rows taken are scaled by the ratio
 * of Parquet bytes to Arrow bytes of the files written so far).
 */
export class FileSizeEstimate {
  /** Written Parquet bytes / Arrow bytes so far; starts pessimistic (1) so files stay below target. */
  private fileBytesSoFar = 1;
  private arrowBytesSoFar = 1;

  /** The file size that rows of `arrowBytes` are expected to encode to. */
  fileBytes(arrowBytes: number): number {
    return (arrowBytes * this.fileBytesSoFar) / this.arrowBytesSoFar;
  }

  /** The Arrow bytes that an encoded file of `fileBytes` stands for. */
  arrowBytes(fileBytes: number): number {
    return (fileBytes * this.arrowBytesSoFar) / this.fileBytesSoFar;
  }

  /** A file of `fileBytes` was encoded from rows of `arrowBytes`. */
  record(fileBytes: number, arrowBytes: number): void {
    this.fileBytesSoFar += fileBytes;
    this.arrowBytesSoFar += arrowBytes;
  }

  /** No file has been recorded yet: the estimate is the pessimistic guess. */
  get unset(): boolean {
    return this.arrowBytesSoFar === 1;
  }
}
