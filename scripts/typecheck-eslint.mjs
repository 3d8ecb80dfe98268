#!/usr/bin/env node
// Typechecks tsconfig.eslint.json (every package's sources with the package and cross-package tests)
// and runs eslint over the repository, both on one TypeScript program: eslint's type-aware rules
// would otherwise build that same program a second time (about 27 s of CPU, as long as the
// typecheck itself). Prints tsc's diagnostics and eslint's stylish report; exits 1 if either found
// an error. Run by scripts/lint.mjs.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import ts from 'typescript';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The files eslint.config.mjs lints with type information; they are all in tsconfig.eslint.json. */
const TYPED_FILES = ['packages/*/src/**/*.ts', 'packages/*/test/**/*.ts', 'test/**/*.ts'];

const configDiagnostics = [];
const parsed = ts.getParsedCommandLineOfConfigFile(
  path.join(repo, 'tsconfig.eslint.json'),
  {},
  { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => configDiagnostics.push(d) },
);
if (!parsed) {
  process.stderr.write(ts.formatDiagnosticsWithColorAndContext(configDiagnostics, ts.createCompilerHost({})));
  process.exit(1);
}
const host = ts.createCompilerHost(parsed.options);
const program = ts.createProgram({
  rootNames: parsed.fileNames,
  options: parsed.options,
  host,
  projectReferences: parsed.projectReferences,
});
// What `tsc -p tsconfig.eslint.json` reports (the config says noEmit).
const diagnostics = [...parsed.errors, ...ts.getPreEmitDiagnostics(program)];
if (diagnostics.length > 0) process.stdout.write(ts.formatDiagnosticsWithColorAndContext(diagnostics, host));

const eslint = new ESLint({
  cwd: repo,
  overrideConfig: { files: TYPED_FILES, languageOptions: { parserOptions: { programs: [program] } } },
});
const results = await eslint.lintFiles(['.']);
const report = await (await eslint.loadFormatter('stylish')).format(results);
if (report) process.stdout.write(report);
const eslintErrors = results.reduce((n, r) => n + r.errorCount + r.fatalErrorCount, 0);
const typeErrors = diagnostics.filter((d) => d.category === ts.DiagnosticCategory.Error).length;
if (typeErrors > 0) process.stdout.write(`typecheck (tsconfig.eslint.json): ${typeErrors} error(s)\n`);
process.exit(typeErrors > 0 || eslintErrors > 0 ? 1 : 0);
