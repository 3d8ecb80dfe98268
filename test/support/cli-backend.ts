/**
 * Running the built `tidemark` binary against a storage backend: the S3 settings of the test
 * server go to the child through the AWS_* variables, as a user would set them.
 */
import { spawn } from 'node:child_process';
import { runTidemark, TIDEMARK_BIN, type ProcessResult, type RunOptions } from './cli-process.js';
import type { StorageBackend } from './backends.js';
import { cliS3Variables, s3TestEnv } from './s3.js';

/** Environment variables that point the CLI at the backend's store. */
export function backendEnv(backend: StorageBackend): Record<string, string> {
  if (backend.name !== 'S3') return {};
  const env = s3TestEnv();
  return env ? cliS3Variables(env) : {};
}

/** `tidemark` bound to a backend: `cli(['read', table])`. */
export function cliFor(backend: StorageBackend): (args: readonly string[], options?: RunOptions) => Promise<ProcessResult> {
  return (args, options = {}) =>
    runTidemark(args, { timeoutMs: 60_000, ...options, env: { ...backendEnv(backend), ...(options.env ?? {}) } });
}

/** Like {@link runTidemark}, but keeps stdout as bytes (binary output formats). */
export function runTidemarkBinary(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: Buffer; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [TIDEMARK_BIN, ...args], {
      env: { ...process.env, TIDEMARK_NO_PROGRESS: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out), stderr });
    });
  });
}

/** Non-empty lines of `text`. */
export const lines = (text: string): string[] => text.split('\n').filter((l) => l !== '');
