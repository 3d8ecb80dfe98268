/**
 * `@tidemark/cli`: the `tidemark` command. {@link main} runs one command line; the rest is for
 * embedding the CLI or adding commands. Names are listed explicitly.
 */
export { main, type MainOptions } from './main.js';
export { commands } from './commands/index.js';
export { defineCommand, ExitCode, type Command } from './command.js';
export { createContext, type CommandContext } from './context.js';
export { CliError, InterruptedError, ReportFileError, UsageError, isUserError } from './errors.js';
export { renderInspectHtml } from './commands/inspect-html.js';
export { INSPECT_TEXT_WIDTH, renderInspectText } from './commands/inspect-text.js';
export {
  parseArgs,
  formatUsage,
  type CommandUsage,
  type OptionKind,
  type OptionSpec,
  type OptionSpecs,
  type OptionValue,
  type ParsedArgs,
  type PositionalSpec,
} from './args.js';
export { createRowFormatter, type RowFormatter } from './output/value-format.js';
