/**
 * `tidemark ingest` run as a service in a child process (the built binary): its stderr read as
 * JSON log events while it runs (`--log-format json`), events awaited, signals sent; and the
 * samples of a Prometheus scrape.
 */
import { spawn } from 'node:child_process';
import { promSamples } from '../../packages/sink/test/helpers.js';
import { TIDEMARK_BIN, type ProcessResult } from './cli-process.js';

export { promSamples };

/** One JSON log line of `--log-format json`. */
export type LogEvent = { time: string; level: string; msg: string } & Record<string, unknown>;

/** A running `tidemark` child whose stderr JSON events can be awaited. */
export class ServiceProcess {
  readonly events: LogEvent[] = [];
  /** stderr lines that are not JSON. */
  readonly notJson: string[] = [];
  readonly exited: Promise<ProcessResult>;
  private readonly child;
  private waiters: Array<() => void> = [];
  private ended = false;

  /** Starts `tidemark <args>`; it is killed with SIGKILL (and `timedOut` reported) after `hangMs`, a hang guard. */
  constructor(args: readonly string[], env: Record<string, string>, hangMs: number) {
    this.child = spawn(process.execPath, [TIDEMARK_BIN, ...args], {
      env: { ...process.env, TIDEMARK_NO_PROGRESS: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let partial = '';
    let timedOut = false;
    this.child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    this.child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      partial += d.toString();
      const done = partial.split('\n');
      partial = done.pop()!;
      // Every line must be one JSON object (checked by the tests through `notJson`).
      for (const line of done) {
        if (line === '') continue;
        try {
          this.events.push(JSON.parse(line) as LogEvent);
        } catch {
          this.notJson.push(line);
        }
      }
      this.wake();
    });
    const timer = setTimeout(() => {
      timedOut = true;
      this.child.kill('SIGKILL');
    }, hangMs);
    this.exited = new Promise((resolve, reject) => {
      this.child.on('error', reject);
      this.child.on('close', (code) => {
        clearTimeout(timer);
        if (partial !== '') this.notJson.push(partial);
        this.ended = true;
        this.wake();
        resolve({ code, stdout, stderr, timedOut });
      });
    });
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** The `count`-th event with message `msg` (rejects if the process ends first). */
  async event(msg: string, count = 1): Promise<LogEvent> {
    for (;;) {
      const found = this.events.filter((e) => e.msg === msg);
      if (found.length >= count) return found[count - 1]!;
      if (this.ended) throw new Error(`the process ended before logging '${msg}' ${count} time(s): ${(await this.exited).stderr}`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }
}

/** GETs a metrics endpoint and returns its samples (throws unless it answers 200). */
export async function scrapeMetrics(url: string): Promise<Map<string, number>> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
  return promSamples(await res.text());
}
