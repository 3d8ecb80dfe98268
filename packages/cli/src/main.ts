/**
 * Entry point of the `tidemark` binary: picks the subcommand, parses its arguments, runs it and
 * turns the outcome into an exit code (0 done, 1 failed, 2 bad usage, 130 interrupted).
 */
import { readFileSync } from 'node:fs';
import { closest, formatShortUsage, formatUsage, parseArgs } from './args.js';
import { ExitCode } from './command.js';
import type { Command } from './command.js';
import { commands as defaultCommands } from './commands/index.js';
import { createContext } from './context.js';
import type { CommandContext } from './context.js';
import { InterruptedError, isUserError, UsageError } from './errors.js';

/** What {@link main} accepts besides argv: any part of the context (tests inject streams) and the command set. */
export interface MainOptions extends Partial<CommandContext> {
  /** Replaces the built-in command registry (tests). */
  readonly commands?: readonly Command[];
}

/**
 * Runs `tidemark` with `argv` (the arguments after the program name) and resolves with the exit
 * code; never rejects for command failures. When no `signal` is given, Ctrl-C (SIGINT) aborts the
 * signal handed to the command, and a second Ctrl-C exits at once; so does SIGTERM for a command
 * that stops gracefully ({@link Command.stopsGracefully}).
 */
export async function main(argv: readonly string[], options: MainOptions = {}): Promise<number> {
  const registry = options.commands ?? defaultCommands;
  let removeHandlers = (): void => {};
  let signal = options.signal;
  if (!signal) {
    const controller = new AbortController();
    signal = controller.signal;
    const graceful = registry.find((c) => c.name === argv[0])?.stopsGracefully === true;
    const on = (name: 'SIGINT' | 'SIGTERM', code: number): (() => void) => {
      const handler = (): void => {
        if (controller.signal.aborted) process.exit(code);
        if (!graceful) ctx.stderr.write('\ntidemark: interrupted; stopping cleanly (press Ctrl-C again to exit at once)\n');
        controller.abort(new InterruptedError('interrupted', name));
      };
      process.on(name, handler);
      return () => process.off(name, handler);
    };
    const removers = [on('SIGINT', ExitCode.Interrupted), ...(graceful ? [on('SIGTERM', ExitCode.Terminated)] : [])];
    removeHandlers = () => removers.forEach((remove) => remove());
  }
  const ctx = createContext({ ...options, signal });
  try {
    return await dispatch(argv, ctx, registry);
  } finally {
    removeHandlers();
  }
}

async function dispatch(argv: readonly string[], ctx: CommandContext, registry: readonly Command[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    ctx.stderr.write(overview(registry));
    return ExitCode.Usage;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? rest[0] : undefined;
    const command = topic === undefined ? undefined : registry.find((c) => c.name === topic);
    if (topic !== undefined && !command) return unknownCommand(topic, ctx, registry);
    ctx.stdout.write(command ? formatUsage(command.summary, command.usage) : overview(registry));
    return ExitCode.Ok;
  }
  if (name === '--version' || name === '-V') {
    ctx.stdout.write(`${version()}\n`);
    return ExitCode.Ok;
  }
  const command = registry.find((c) => c.name === name);
  if (!command) return unknownCommand(name, ctx, registry);

  try {
    const args = parseArgs(command.name, command.usage, rest);
    if (args.help) {
      ctx.stdout.write(formatUsage(command.summary, command.usage));
      return ExitCode.Ok;
    }
    const code = await command.run(args, ctx);
    return code ?? ExitCode.Ok;
  } catch (err) {
    return report(err, command, ctx);
  }
}

/** Prints an error the way its kind deserves and returns the exit code. */
function report(err: unknown, command: Command, ctx: CommandContext): number {
  const prefix = `tidemark ${command.name}`;
  if (err instanceof UsageError) {
    ctx.stderr.write(`${prefix}: ${err.message}\n${formatShortUsage(command.name, command.usage)}`);
    return ExitCode.Usage;
  }
  if (
    ctx.signal.aborted &&
    (err === ctx.signal.reason || err instanceof InterruptedError || (err as { name?: string })?.name === 'AbortError')
  ) {
    ctx.stderr.write(`${prefix}: interrupted\n`);
    return ExitCode.Interrupted;
  }
  // The reader of our stdout went away (`tidemark read … | head`): not a failure.
  if ((err as { code?: string })?.code === 'EPIPE') return ExitCode.Ok;
  const message = err instanceof Error ? err.message : String(err);
  if (isUserError(err)) {
    ctx.stderr.write(`${prefix}: ${message}\n`);
    return ExitCode.Failed;
  }
  if (ctx.env['TIDEMARK_DEBUG'] === '1') {
    ctx.stderr.write(`${prefix}: unexpected error: ${err instanceof Error && err.stack ? err.stack : message}\n`);
  } else {
    ctx.stderr.write(`${prefix}: unexpected error: ${message}\n(set TIDEMARK_DEBUG=1 to print the stack trace)\n`);
  }
  return ExitCode.Failed;
}

function unknownCommand(name: string, ctx: CommandContext, registry: readonly Command[]): number {
  const close = closest(
    name,
    registry.map((c) => c.name),
  );
  ctx.stderr.write(`tidemark: unknown command '${name}'${close ? ` (did you mean ${close}?)` : ''}\n\n${overview(registry)}`);
  return ExitCode.Usage;
}

function overview(registry: readonly Command[]): string {
  const width = Math.max(...registry.map((c) => c.name.length));
  const lines = [
    'Usage: tidemark <command> [arguments] [options]',
    '',
    'Commands:',
    ...registry.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    "Run 'tidemark <command> --help' for the options of a command.",
    'Exit codes: 0 done, 1 failed, 2 bad usage, 130 interrupted. TIDEMARK_DEBUG=1 prints stack traces of unexpected errors.',
  ];
  return lines.join('\n') + '\n';
}

function version(): string {
  try {
    // Same relative path from src/ (tests) and dist/ (the binary).
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}
