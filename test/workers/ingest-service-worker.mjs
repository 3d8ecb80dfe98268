// Child process of test/ingest-service.test.ts: runs runIngest with Prometheus metrics served on a
// port, stops it through its signal after the first checkpoint, scrapes the metrics once and then
// does nothing more: no close, no exit call. The test asserts that the process ends on its own.
// Arguments: the table location, the JSON-lines source and the checkpoint state location.
import { IngestMetrics, JsonLinesFileSource, openCheckpointStore, runIngest, startMetricsServer } from '@tidemark/sink';

const [table, source, state] = process.argv.slice(2);
const metrics = new IngestMetrics({ processMetrics: true });
const server = await startMetricsServer(metrics, { port: 0, host: '127.0.0.1' });
const stop = new AbortController();
const summary = await runIngest({
  table,
  source: new JsonLinesFileSource(source),
  stateStore: openCheckpointStore(state),
  checkpointEvery: 1000,
  observer: metrics,
  signal: stop.signal,
  stopTimeoutMs: 60_000,
  onCheckpoint: () => stop.abort(),
});
const text = await (await fetch(`${server.url}/metrics`)).text();
const scraped = Number(/^tidemark_ingest_records_total (\d+)$/m.exec(text)?.[1]);
console.log(JSON.stringify({ status: summary.status, records: summary.records, scraped }));
