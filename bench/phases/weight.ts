/** Page weight in Chromium: JavaScript, HTML + CSS and the whole transfer of an article and a section page. */
import type { Browser } from 'playwright-core';
import { measurePageWeight } from '../browser.ts';
import { measureEditorWeight } from '../editor-weight.ts';
import type { BenchServer } from '../processes.ts';
import { record, say } from '../report.ts';

export async function measureWeight(server: BenchServer, browser: Browser, slug: string, clientDir: string): Promise<void> {
  say('page weight in Chromium...');
  for (const [name, url] of [
    ['article page', `/article/${slug}`],
    ['section page', '/section/world'],
  ] as const) {
    const weight = await measurePageWeight(browser, `${server.url}${url}`);
    const js = weight.jsGzipBytes / 1024;
    const kb = (n: number) => Number((n / 1024).toFixed(1));
    record(
      'weight',
      `${name}: JavaScript gzip (${weight.jsFiles} files, ${Math.round(weight.jsRawBytes / 1024)} KB raw)`,
      Number(js.toFixed(1)),
      'KB',
      name === 'article page' ? '<= 90' : '',
      name === 'article page' ? js <= 90 : undefined,
    );
    record(
      'weight',
      `${name}: HTML + JS + CSS transferred (brotli; ${kb(weight.documentBytes)} + ${kb(weight.scriptBytes)} + ${kb(weight.styleBytes)} KB)`,
      kb(weight.documentBytes + weight.scriptBytes + weight.styleBytes),
      'KB',
    );
    record('weight', `${name}: total transfer (${weight.requests} requests, images included)`, kb(weight.totalBytes), 'KB');
  }
  // Issue 34: the visual editor loads on the editor route only, when its Visual tab is opened; reader pages never fetch it.
  const editor = measureEditorWeight(clientDir);
  record(
    'weight',
    `visual editor (editor route, Visual tab): JavaScript gzip (${editor.files} files, ${Math.round(editor.rawBytes / 1024)} KB raw)`,
    Number((editor.gzipBytes / 1024).toFixed(1)),
    'KB',
  );
}
