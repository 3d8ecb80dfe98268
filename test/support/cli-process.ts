/**
 * Runs the built `tidemark` binary (packages/cli/bin/tidemark.js) in a child process, the way cron
 * or a shell does, so tests see the real exit code and whether the process ends on its own.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const TIDEMARK_BIN = fileURLToPath(new URL('../../packages/cli/bin/tidemark.js', import.meta.url));

export interface ProcessResult {
  /** Exit code; null when the process was killed (see `timedOut`). */
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** True when the process had not exited after `timeoutMs` and was killed. */
  readonly timedOut: boolean;
}

export interface RunOptions {
  readonly cwd?: string;
  readonly env?: Record<string, string | undefined>;
  readonly stdin?: string | Uint8Array;
  /** Kill the process after this long and report `timedOut` (a hang guard, not a speed check). */
  readonly timeoutMs?: number;
}

/** Runs `node <script> ...args` and resolves when it exits or after the timeout. */
export function runNode(script: string, args: readonly string[], options: RunOptions = {}): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      cwd: options.cwd,
      env: { ...process.env, TIDEMARK_NO_PROGRESS: '1', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs ?? 30_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.stdin ?? '');
  });
}

/**
 * Runs a worker script (`node <script> <config as JSON>`) and resolves with its whole stdout when it
 * exits with 0, else rejects with its stderr. Resolves on 'close', not 'exit': a child's last stdout
 * chunk may still be in the pipe when 'exit' fires, which once lost a worker's last result line.
 */
export async function runWorkerProcess(
  script: string,
  config: { readonly worker?: unknown } & Record<string, unknown>,
  options: { readonly cwd?: string; readonly timeoutMs?: number } = {},
): Promise<string> {
  const r = await runNode(script, [JSON.stringify(config)], { cwd: options.cwd, timeoutMs: options.timeoutMs ?? 600_000 });
  const who = config.worker === undefined ? 'worker' : `worker ${String(config.worker)}`;
  if (r.timedOut) throw new Error(`${who} (${script}) did not exit and was killed: ${r.stderr}`);
  if (r.code !== 0) throw new Error(`${who} (${script}) exited with ${String(r.code)}: ${r.stderr}`);
  return r.stdout;
}

/** Runs the `tidemark` binary with `args`. */
export function runTidemark(args: readonly string[], options: RunOptions = {}): Promise<ProcessResult> {
  return runNode(TIDEMARK_BIN, args, options);
}
