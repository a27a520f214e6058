/**
 * What the pages are drawn with (issue 36): the sources the public page routes reach through their
 * imports (templates, components, islands, styles, the loaders they call), the static files, the
 * locked dependencies and the site settings. buildFingerprint covers the whole code and so says when a
 * new bundle is needed; this one says whether any page can come out different. A deploy that changes
 * only what no page shows (an API handler, the admin, the editor, a script) keeps it, and `npm run
 * rebuild` then swaps in the new bundle without drawing a page again.
 *
 * Imports are read with a pattern, not a parser: every import of ours is a relative specifier in quotes
 * (`from './x.ts'`, `import './y.css'`, `import('./z.ts')`, CSS `@import`), and packages count through
 * the lock file. One the pattern missed could only make the fingerprint miss a change, so the tests
 * check it against a change in a component several imports deep.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { siteSettingsOf } from './build-state.ts';

/** Routes that are not public pages: the API, the back office and the editor. */
const PRIVATE_ROUTE = /^src\/pages\/(?:api|admin|editor)\//;
const RELATIVE_IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*|@import\s+(?:url\(\s*)?)['"](\.{1,2}\/[^'"\n]+)['"]/g;
const EXTENSIONS = ['', '.ts', '.tsx', '.astro', '.js', '.mjs', '/index.ts'];
/** Files whose imports are followed; anything else reached (an image, a font) counts by its bytes only. */
const SOURCE = /\.(?:ts|tsx|astro|js|mjs|css)$/;

function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
}

function resolveImport(from: string, specifier: string): string | undefined {
  const base = path.resolve(path.dirname(from), specifier.replace(/[?#].*$/, ''));
  for (const extension of EXTENSIONS) {
    const candidate = base + extension;
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

/** The project's files a public page can depend on: the routes, middleware, config and page loaders, and all they import. */
export function pageSources(root: string): string[] {
  const relative = (file: string) => path.relative(root, file).split(path.sep).join('/');
  const entries = [
    ...filesUnder(path.join(root, 'src/pages')).filter((file) => !PRIVATE_ROUTE.test(relative(file))),
    path.join(root, 'src/middleware.ts'),
    path.join(root, 'astro.config.ts'),
    // What each page shows is loaded on the main thread and handed to the render thread: the loaders count too.
    path.join(root, 'src/server/publishing/page-loads.ts'),
    path.join(root, 'src/server/publishing/render-thread-worker.ts'),
  ].filter((file) => fs.existsSync(file));
  const seen = new Set<string>();
  const queue = [...entries];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    if (!SOURCE.test(file)) continue;
    const text = fs.readFileSync(file, 'utf8');
    for (const match of text.matchAll(RELATIVE_IMPORT)) {
      const target = resolveImport(file, match[1]!);
      if (target && !seen.has(target)) queue.push(target);
    }
  }
  return [...seen].map(relative).sort();
}

/** The render fingerprint of the project at `root` (see the module comment). */
export function renderFingerprint(root: string, env: NodeJS.ProcessEnv = process.env): string {
  const digest = createHash('sha256');
  const files = [
    ...pageSources(root),
    ...filesUnder(path.join(root, 'public')).map((file) => path.relative(root, file).split(path.sep).join('/')),
    'package-lock.json',
    'tsconfig.json',
  ];
  for (const file of files) {
    const full = path.join(root, file);
    if (fs.existsSync(full)) digest.update(file).update('\0').update(fs.readFileSync(full)).update('\0');
  }
  digest.update(JSON.stringify(siteSettingsOf(env)));
  return digest.digest('base64url').slice(0, 32);
}
