/** The visual editor's JavaScript as the Visual tab fetches it: its lazy chunk and the chunks only it needs, gzip-compressed. */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

export type EditorWeight = { files: number; rawBytes: number; gzipBytes: number };

/** The chunks a file imports statically, followed through the whole graph (Vite writes relative "./x.js" specifiers). */
function staticGraph(dir: string, entry: string): Set<string> {
  const seen = new Set<string>();
  const stack = [entry];
  while (stack.length > 0) {
    const file = stack.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = fs.readFileSync(path.join(dir, file), 'utf8');
    for (const match of text.matchAll(/(?:\bfrom\s*|\bimport\s*)["']\.\/([^"']+\.js)["']/g)) stack.push(match[1]!);
  }
  return seen;
}

/** Measures the editor's own JavaScript in a built client folder (the files the Visual tab adds to the editor page). */
export function measureEditorWeight(clientDir: string): EditorWeight {
  const dir = path.join(clientDir, '_astro');
  const files = fs.readdirSync(dir);
  const visual = files.find((name) => /^VisualEditor\.[\w-]+\.js$/.test(name));
  const island = files.find((name) => /^ArticleEditor\.[\w-]+\.js$/.test(name));
  if (!visual || !island) throw new Error(`no VisualEditor or ArticleEditor chunk in ${dir}`);
  const already = staticGraph(dir, island);
  const added = [...staticGraph(dir, visual)].filter((file) => !already.has(file));
  let rawBytes = 0;
  let gzipBytes = 0;
  for (const file of added) {
    const bytes = fs.readFileSync(path.join(dir, file));
    rawBytes += bytes.length;
    gzipBytes += zlib.gzipSync(bytes, { level: 9 }).length;
  }
  return { files: added.length, rawBytes, gzipBytes };
}
