/** The layers of docs/architecture.md, checked on the real source: no import reaches a layer its folder may not use. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Which layers each layer may import (besides itself); the same table as docs/architecture.md. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  pages: ['views', 'layouts', 'components', 'islands', 'lib', 'api', 'server', 'security', 'schemas', 'config', 'styles'],
  views: ['layouts', 'components', 'islands', 'lib', 'schemas', 'config'],
  layouts: ['components', 'islands', 'lib', 'config', 'styles'],
  components: ['islands', 'lib', 'schemas', 'config'],
  islands: ['lib', 'schemas'],
  lib: ['schemas'],
  api: ['server', 'lib', 'security', 'schemas', 'config'],
  server: ['store', 'lib', 'security', 'schemas', 'config'],
  store: ['security', 'schemas'],
  security: [],
  schemas: [],
  config: ['schemas'],
  scripts: ['api', 'server', 'store', 'security', 'schemas', 'config'],
};

/** Folders of the store that only the store itself may open: the rest of the code goes through src/store/index.ts. */
const STORE_IMPLEMENTATIONS = ['src/store/lowdb/', 'src/store/pg/'];

/** The layer a repository file belongs to, or undefined for files outside the layered tree (tests, bench, config files). */
export function layerOf(file: string): string | undefined {
  const rel = path.relative(ROOT, file).split(path.sep).join('/');
  if (rel.startsWith('scripts/')) return 'scripts';
  if (rel === 'src/config.ts') return 'config';
  // The middleware guards requests: it is part of the HTTP edge.
  if (rel === 'src/middleware.ts') return 'api';
  const match = /^src\/([^/]+)\//.exec(rel);
  return match ? match[1] : undefined;
}

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => /\.(ts|tsx|astro)$/.test(name) && !name.endsWith('.d.ts') && !name.endsWith('.test.ts'))
    .map((name) => path.join(dir, name));
}

/** The relative module specifiers a file imports (static, dynamic and side-effect imports, and re-exports). */
export function importsOf(text: string): string[] {
  const found = new Set<string>();
  for (const match of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm)) found.add(match[1]!);
  return [...found];
}

/** Every import in src/ and scripts/ that crosses the layers, as "from -> to (layer -> layer)". */
function crossings(): string[] {
  const problems: string[] = [];
  for (const file of [...sourceFiles(path.join(ROOT, 'src')), ...sourceFiles(path.join(ROOT, 'scripts'))]) {
    const from = layerOf(file);
    if (!from) continue;
    for (const specifier of importsOf(fs.readFileSync(file, 'utf8'))) {
      const target = path.resolve(path.dirname(file), specifier);
      const to = layerOf(target);
      const rel = (p: string) => path.relative(ROOT, p).split(path.sep).join('/');
      if (to && to !== from && !MAY_IMPORT[from]!.includes(to)) problems.push(`${rel(file)} -> ${rel(target)} (${from} -> ${to})`);
      const implementation = STORE_IMPLEMENTATIONS.find((folder) => rel(target).startsWith(folder));
      if (implementation && !rel(file).startsWith('src/store/')) problems.push(`${rel(file)} -> ${rel(target)} (past the store interface)`);
    }
  }
  return problems;
}

/** The relative imports of every file in src/ and scripts/ that resolve to another of those files, type-only ones included. */
function importGraph(): Map<string, string[]> {
  const files = [...sourceFiles(path.join(ROOT, 'src')), ...sourceFiles(path.join(ROOT, 'scripts'))];
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = importsOf(fs.readFileSync(file, 'utf8')).map((specifier) => path.resolve(path.dirname(file), specifier));
    graph.set(
      file,
      targets.filter((target) => known.has(target)),
    );
  }
  return graph;
}

/** Each circle of imports once, as "a -> b -> a" (a depth-first search that reports the back edges it meets). */
export function circlesOf(graph: Map<string, string[]>): string[] {
  const rel = (p: string) => path.relative(ROOT, p).split(path.sep).join('/');
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const circles: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') circles.push([...stack.slice(stack.indexOf(next)), next].map(rel).join(' -> '));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file);
  return circles;
}

/** The composition root, and the only files that may start a runtime: the entry points (docs/architecture.md, "Wiring"). */
const COMPOSITION_ROOT = 'src/server/app.ts';
const STARTS_RUNTIMES = [/^scripts\//, /^src\/server\/boot\.ts$/, /^src\/middleware\.ts$/];

/** The one file that may hold process-wide registries (docs/architecture.md, "Wiring"). */
const PROCESS_WIDE_FILE = 'src/lib/process-wide.ts';
/** Files in src/ and scripts/ that reach globalThis by a symbol or an index, outside the one file for it. */
export function registriesOutside(files: ReadonlyMap<string, string>): string[] {
  return [...files]
    .filter(([file, text]) => file !== PROCESS_WIDE_FILE && /Symbol\.for\s*\(|globalThis\s*(?:as\b[^;]*?\))?\s*\[/.test(text))
    .map(([file]) => file);
}

describe('layers', () => {
  it('finds the imports of a file, static, dynamic and side-effect ones', () => {
    const text = `import a from '../a.ts';\nimport type { B } from "./b.ts";\nimport '../c.css';\nconst d = await import('../../d.ts');\nimport x from 'zod';`;
    expect(importsOf(text).sort()).toEqual(['../../d.ts', '../a.ts', '../c.css', './b.ts']);
  });

  it('has no import that crosses the layers of docs/architecture.md', () => {
    expect(crossings()).toEqual([]);
  });

  it('finds a circle of imports', () => {
    const [a, b, c] = ['src/server/a.ts', 'src/server/b.ts', 'src/server/c.ts'].map((f) => path.join(ROOT, f));
    const graph = new Map([
      [a!, [b!]],
      [b!, [c!]],
      [c!, [a!]],
    ]);
    expect(circlesOf(graph)).toEqual(['src/server/a.ts -> src/server/b.ts -> src/server/c.ts -> src/server/a.ts']);
    expect(circlesOf(new Map([...graph, [c!, []]]))).toEqual([]);
  });

  it('finds a registry on globalThis outside its file', () => {
    const files = new Map([
      ['src/server/a.ts', "const KEY = Symbol.for('x');"],
      ['src/server/b.ts', 'const registry = (globalThis as unknown as Registry)[KEY];'],
      ['src/server/c.ts', 'globalThis[key] = 1;'],
      ['src/server/d.ts', 'globalThis.fetch(url);'],
      [PROCESS_WIDE_FILE, "Symbol.for('meridian-news.toasts')"],
    ]);
    expect(registriesOutside(files)).toEqual(['src/server/a.ts', 'src/server/b.ts', 'src/server/c.ts']);
  });

  // Wiring is visible: services are built in src/server/app.ts and handed down, not found on globalThis.
  it('keeps process-wide registries in src/lib/process-wide.ts', () => {
    const files = new Map(
      [...sourceFiles(path.join(ROOT, 'src')), ...sourceFiles(path.join(ROOT, 'scripts'))].map((file) => [
        path.relative(ROOT, file).split(path.sep).join('/'),
        fs.readFileSync(file, 'utf8'),
      ]),
    );
    expect(registriesOutside(files)).toEqual([]);
    expect(layerOf(path.join(ROOT, PROCESS_WIDE_FILE))).toBe('lib');
  });

  // Everything else is handed its runtime: a domain module that started one would open a second store.
  it('starts runtimes only at the entry points, from src/server/app.ts', () => {
    const importers = [...importGraph()]
      .filter(([, targets]) => targets.includes(path.join(ROOT, COMPOSITION_ROOT)))
      .map(([file]) => path.relative(ROOT, file).split(path.sep).join('/'));
    expect(importers).toContain('src/middleware.ts');
    expect(importers.filter((file) => !STARTS_RUNTIMES.some((allowed) => allowed.test(file)))).toEqual([]);
    expect(layerOf(path.join(ROOT, COMPOSITION_ROOT))).toBe('server');
  });

  // A circle makes the import order decide what is defined when a module runs; one way keeps it simple.
  it('has no circle of imports in src/ and scripts/', () => {
    expect(circlesOf(importGraph())).toEqual([]);
  });
});
