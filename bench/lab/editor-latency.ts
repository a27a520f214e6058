/**
 * Input latency of the visual editor (issue 34) in a 5,000-word article: Chromium types into the Visual tab
 * and each key's time from the keydown event to the frame after it was painted is read in the page.
 * Prints p50/p95/max and writes bench/results/editor-latency.json. `OUT_DIR=.out/e2e node bench/lab/editor-latency.ts`
 * (any built site; the server is the real one, started as the tests start it).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { ADMIN, ROOT, startServer } from '../../tests/helpers/server.ts';
import { CHROMIUM } from '../browser.ts';
import { measureEditorWeight } from '../editor-weight.ts';

const WORDS = 5_000;
const KEYS = Number(process.env.EDITOR_KEYS ?? 300);
/** A fast typist's pace (about 12 characters a second, 140 words a minute): each key lands on a settled page. */
const KEY_GAP_MS = 80;
const LOREM = 'the council said on monday that the harbour project would go ahead after a long review of costs and risks'.split(' ');

/** A body of about WORDS words: paragraphs of 50 words, a subheading every ten, a list now and then. */
function buildBody(): string {
  const parts: string[] = [];
  let words = 0;
  for (let i = 0; words < WORDS; i++) {
    if (i % 10 === 0) parts.push(`<h2>Part ${i / 10 + 1}</h2>`);
    if (i % 25 === 12) parts.push('<ul><li>First point</li><li>Second <strong>point</strong></li></ul>');
    const text = Array.from({ length: 50 }, (_, j) => LOREM[(i * 7 + j) % LOREM.length]).join(' ');
    parts.push(`<p>${text.replace('harbour', '<em>harbour</em>')}.</p>`);
    words += 50;
  }
  return parts.join('');
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-editor-latency-'));
const server = await startServer({ dataDir, env: { RATE_LIMIT_FACTOR: '100' } });
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
try {
  const context = await browser.newContext({ baseURL: server.url, viewport: { width: 1280, height: 900 } });
  const login = await context.request.post('/api/auth/login', { data: ADMIN });
  if (!login.ok()) throw new Error(`sign-in failed: ${login.status()}`);
  const created = await context.request.post('/api/articles', { data: { title: 'Latency bench', bodyHtml: buildBody() } });
  if (!created.ok()) throw new Error(`create failed: ${created.status()} ${await created.text()}`);
  const { id } = (await created.json()) as { id: string };

  const page = await context.newPage();
  await page.goto(`/admin/editor/${id}`);
  await page.locator('[data-hydrated="true"]').first().waitFor();
  await page.getByRole('tab', { name: 'Visual' }).click();
  const editor = page.getByTestId('visual-editor');
  await editor.waitFor();
  const words = await page.getByTestId('body-stats').textContent();
  // Type in the middle of the article, where every keystroke re-lays out the text below it.
  await editor.locator('p').nth(50).click();
  await page.keyboard.press('End');
  await page.evaluate(() => {
    const samples: number[] = [];
    (window as unknown as { __latency: number[] }).__latency = samples;
    window.addEventListener(
      'keydown',
      (event) => {
        const start = event.timeStamp;
        // requestAnimationFrame runs before the frame is painted; a message posted from it arrives after.
        requestAnimationFrame(() => {
          const channel = new MessageChannel();
          channel.port1.onmessage = () => samples.push(performance.now() - start);
          channel.port2.postMessage(null);
        });
      },
      { capture: true },
    );
  });
  const text = 'and the mayor added that work would start in spring. ';
  for (let i = 0; i < KEYS; i++) {
    await page.keyboard.type(text[i % text.length]!);
    await page.waitForTimeout(KEY_GAP_MS);
  }
  await page.waitForTimeout(500);
  const samples = await page.evaluate(() => (window as unknown as { __latency: number[] }).__latency.splice(0));
  const sorted = [...samples].sort((a, b) => a - b);
  // Then words with a pause after each just longer than the view's write delay (300 ms): the write of the
  // 5,000-word HTML (and the form's re-render, preview and word count) runs as the next word starts.
  for (let word = 0; word < 25; word++) {
    for (const key of 'word ') {
      await page.keyboard.type(key);
      await page.waitForTimeout(KEY_GAP_MS);
    }
    await page.waitForTimeout(320 - KEY_GAP_MS);
  }
  await page.waitForTimeout(500);
  const withWrites = (await page.evaluate(() => (window as unknown as { __latency: number[] }).__latency)).sort((a, b) => a - b);
  const result = {
    date: new Date().toISOString(),
    article: words,
    keys: samples.length,
    p50Ms: Number(percentile(sorted, 50).toFixed(1)),
    p95Ms: Number(percentile(sorted, 95).toFixed(1)),
    maxMs: Number(sorted[sorted.length - 1]!.toFixed(1)),
    keyGapMs: KEY_GAP_MS,
    withWrites: {
      keys: withWrites.length,
      p50Ms: Number(percentile(withWrites, 50).toFixed(1)),
      p95Ms: Number(percentile(withWrites, 95).toFixed(1)),
      maxMs: Number(withWrites[withWrites.length - 1]!.toFixed(1)),
    },
    target: 'p95 < 50 ms',
    load1: Number(os.loadavg()[0]!.toFixed(2)),
    editorJsGzipKB: Number((measureEditorWeight(path.resolve(ROOT, process.env.OUT_DIR ?? 'dist', 'client')).gzipBytes / 1024).toFixed(1)),
  };
  console.log(JSON.stringify(result, null, 2));
  fs.mkdirSync(path.join(ROOT, 'bench/results'), { recursive: true });
  fs.writeFileSync(path.join(ROOT, 'bench/results/editor-latency.json'), `${JSON.stringify(result, null, 2)}\n`);
} finally {
  await browser.close();
  await server.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
