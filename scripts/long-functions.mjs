#!/usr/bin/env node
// Lists the functions of packages/*/src longer than a bound (default 100 lines), longest first:
// the "easy to change" measure (procedures as named steps). A report, not a check: declarative
// tables (option lists, type maps) are long on purpose. Lines are counted from the declaration to
// the closing brace; a function's nested functions count in its own length and are listed too.
//
//   node scripts/long-functions.mjs [--min N] [--json]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const min = Number(args[args.indexOf('--min') + 1] ?? 100) || 100;
const json = args.includes('--json');

function* sourceFiles(dir) {
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) yield* sourceFiles(p);
    else if (p.endsWith('.ts') && !p.endsWith('.d.ts')) yield p;
  }
}

/** Name of a function-like node: its own, or the variable, property or class member it is assigned to. */
function nameOf(node, sf) {
  if (node.name) return node.name.getText(sf);
  const p = node.parent;
  if (p && (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) && p.name) return p.name.getText(sf);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  return '<anonymous>';
}

const found = [];
for (const pkg of readdirSync(path.join(repo, 'packages'))) {
  const src = path.join(repo, 'packages', pkg, 'src');
  try {
    statSync(src);
  } catch {
    continue;
  }
  for (const file of sourceFiles(src)) {
    const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node) => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
        const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line + 1;
        const lines = end - start + 1;
        if (lines > min) found.push({ file: path.relative(repo, file), name: nameOf(node, sf), start, lines });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
}
found.sort((a, b) => b.lines - a.lines);
if (json) console.log(JSON.stringify(found, null, 2));
else for (const f of found) console.log(`${String(f.lines).padStart(5)}  ${f.file}:${f.start}  ${f.name}`);
