#!/usr/bin/env node
// Import circles among the packages' sources (packages/*/src), a check of `npm run lint`: a file
// that imports itself through others cannot be understood, tested or moved on its own, and a
// runtime circle makes module initialisation order matter. Type-only imports count too (they tie
// the files together just the same).
//
// dependency-cruiser resolves the imports (TypeScript with its `.js` specifiers, `import type`, the
// `@tidemark/*` packages mapped to their sources by tsconfig.eslint.json, so a circle across
// packages is seen as well). It is chosen over madge (a release a year or less, no type-only
// distinction) and eslint's import/no-cycle (slow on a type-aware eslint run, and an exception
// can only be an inline comment in the file concerned); 17.x is its line that runs on Node 20.
//
// How: the strongly connected components of the module graph are the files that import each
// other in circles, and inside a component every import lies on a circle. So every import
// between two files of one component must be an import of a known circle (KNOWN_CIRCLES); any
// other closes a new circle. Known circles can go one by one without touching the others.
//
//   node scripts/check-circles.mjs          # exit 1 on an import that closes a circle not in KNOWN_CIRCLES
//   node scripts/check-circles.mjs --json   # the components found, as JSON
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise } from 'dependency-cruiser';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Circles that exist today and are being removed by their owners (issue "easy to change"), each
 * as its import path: `[a, b, c]` is a -> b -> c -> a. The check prints those still there on every
 * run and fails on an import that closes any other circle. Remove an entry once its circle is gone
 * (the check says so); the goal is an empty list.
 */
const KNOWN_CIRCLES = [];

const SOURCE_ROOTS = ['storage', 'orc', 'format', 'core', 'sink', 'maintenance', 'cli', 'tidemark'].map((p) => `packages/${p}/src`);

/** The module graph of packages/*\/src: file -> files it imports (type-only imports included). */
export async function importGraph() {
  const result = await cruise(
    SOURCE_ROOTS,
    {
      baseDir: repo,
      includeOnly: '^packages/[^/]+/src/',
      tsPreCompilationDeps: true,
      tsConfig: { fileName: 'tsconfig.eslint.json' },
    },
    undefined,
    { tsConfig: extractTSConfig(path.join(repo, 'tsconfig.eslint.json')) },
  );
  const graph = new Map();
  for (const m of result.output.modules) {
    graph.set(m.source, [...new Set(m.dependencies.filter((d) => !d.couldNotResolve).map((d) => d.resolved))]);
  }
  return graph;
}

/** Strongly connected components with more than one file (Tarjan's algorithm, iterative). */
export function circles(graph) {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const out = [];
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work = [[start, 0]];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const [v, i] = frame;
      const deps = graph.get(v) ?? [];
      if (i < deps.length) {
        frame[1]++;
        const w = deps[i];
        if (!index.has(w)) {
          index.set(w, next);
          low.set(w, next++);
          stack.push(w);
          onStack.add(w);
          work.push([w, 0]);
        } else if (onStack.has(w)) {
          low.set(v, Math.min(low.get(v), index.get(w)));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1][0];
        low.set(parent, Math.min(low.get(parent), low.get(v)));
      }
      if (low.get(v) === index.get(v)) {
        const component = [];
        let w;
        do {
          w = stack.pop();
          onStack.delete(w);
          component.push(w);
        } while (w !== v);
        const selfImport = (graph.get(v) ?? []).includes(v);
        if (component.length > 1 || selfImport) out.push(component.sort());
      }
    }
  }
  return out.sort((a, b) => a[0].localeCompare(b[0]));
}

/** The imports of a circle given as its path `[a, b, c]` (a -> b -> c -> a), as `from -> to` keys. */
function circleEdges(circle) {
  return circle.map((from, i) => `${from} -> ${circle[(i + 1) % circle.length]}`);
}

/** A shortest import path from `from` to `to` through `members`, or null. */
function pathWithin(graph, members, from, to) {
  const prev = new Map([[from, null]]);
  const queue = [from];
  while (queue.length > 0) {
    const v = queue.shift();
    if (v === to) {
      const out = [];
      for (let x = v; x !== null; x = prev.get(x)) out.unshift(x);
      return out;
    }
    for (const w of graph.get(v) ?? []) {
      if (members.has(w) && !prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return null;
}

/**
 * Checks the graph against the known circles. Returns the known circles still there, those gone,
 * and the imports that close another circle, each with the circle it closes.
 */
export function checkCircles(graph, knownCircles) {
  const known = new Set(knownCircles.flatMap(circleEdges));
  const inCircle = new Set();
  const unexpected = [];
  for (const component of circles(graph)) {
    const members = new Set(component);
    for (const from of component) {
      for (const to of graph.get(from) ?? []) {
        if (!members.has(to)) continue;
        const edge = `${from} -> ${to}`;
        inCircle.add(edge);
        // The circle it closes: this import, then back from `to` to `from`.
        if (!known.has(edge)) unexpected.push({ edge, circle: [from, ...(pathWithin(graph, members, to, from) ?? [to])] });
      }
    }
  }
  const stillThere = knownCircles.filter((c) => circleEdges(c).every((e) => inCircle.has(e)));
  const gone = knownCircles.filter((c) => !stillThere.includes(c));
  return { stillThere, gone, unexpected };
}

async function main() {
  const graph = await importGraph();
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(circles(graph), null, 2));
    return 0;
  }
  const { stillThere, gone, unexpected } = checkCircles(graph, KNOWN_CIRCLES);
  const show = (circle) => [...circle, circle[0]].join(' -> ');
  console.log(`import circles among ${graph.size} source files of packages/*/src:`);
  if (stillThere.length > 0) {
    console.log(`  ${stillThere.length} known (KNOWN_CIRCLES in scripts/check-circles.mjs, to be removed):`);
    for (const c of stillThere) console.log(`    ${show(c)}`);
  }
  for (const c of gone) console.log(`  gone, remove it from KNOWN_CIRCLES: ${show(c)}`);
  if (unexpected.length === 0) {
    console.log('  no new circle');
    return 0;
  }
  console.log(`  ${unexpected.length} import(s) closing a NEW circle (a file imports itself through others):`);
  for (const u of unexpected) console.log(`    ${u.edge}, closing ${u.circle.join(' -> ')}`);
  console.log('  Break it: move what both sides need into a module of its own, or pass it in (an interface the caller satisfies).');
  return 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exit(await main());
}
