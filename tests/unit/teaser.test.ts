/** The teaser of a gated article (issue 48): what of its body may leave the server, on sanitised bodies as the editor stores them. */
import { describe, expect, it } from 'vitest';
import { isGated, publicBodyOf, teaserOf, TEASER_MAX_CHARS } from '../../src/schemas/teaser.ts';
import { htmlToText, sanitizeBodyHtml } from '../../src/server/html.ts';

const paragraph = (words: number, word = 'word') => `<p>${Array.from({ length: words }, (_, i) => `${word}${i}`).join(' ')}</p>`;
/** The text a reader sees (htmlToText keeps four characters escaped: they count as one each here). */
const text = (html: string) =>
  htmlToText(html).replace(/&(lt|gt|quot|amp);/g, (_, name: string) => ({ lt: '<', gt: '>', quot: '"', amp: '&' })[name]!);
/** A long last paragraph, so the half-of-the-text rule leaves room for the blocks a case is about. */
const LONG_END = paragraph(100, 'rest');

/** Every element a fragment opens is closed, in order (the teaser is never cut mid-element). */
function expectBalanced(html: string): void {
  const stack: string[] = [];
  for (const match of html.matchAll(/<(\/?)([a-z0-9]+)\b[^>]*?(\/?)>/g)) {
    const [, closing, name, selfClosing] = match;
    if (selfClosing || ['img', 'br', 'hr'].includes(name!)) continue;
    if (closing) expect(stack.pop(), `</${name}> in ${html}`).toBe(name);
    else stack.push(name!);
  }
  expect(stack, html).toEqual([]);
}

describe('teaserOf', () => {
  it('keeps the first two paragraphs of a long story, whole, and nothing after them', () => {
    const body = sanitizeBodyHtml(
      '<p>The council met on <strong>Tuesday</strong>.</p><p>It voted to close the <a href="https://x.example">bridge</a>.</p>' +
        '<p>The secret third paragraph.</p><p>A fourth one.</p><p>And a fifth, to make the story long enough for two.</p>',
    );
    const teaser = teaserOf(body);
    expect(teaser).toBe(
      '<p>The council met on <strong>Tuesday</strong>.</p>\n' +
        '<p>It voted to close the <a href="https://x.example" rel="noopener noreferrer nofollow" target="_blank">bridge</a>.</p>',
    );
    expect(teaser).not.toContain('secret');
  });

  it('stops before a block that would take it past the character limit', () => {
    const body = [paragraph(40), paragraph(80, 'late'), paragraph(200, 'rest'), paragraph(200, 'end')].join('');
    const teaser = teaserOf(body);
    expect(teaser).toBe(paragraph(40));
    expect(text(teaser).length).toBeLessThanOrEqual(TEASER_MAX_CHARS);
  });

  it('cuts a first paragraph longer than the limit at a word, with its inline elements closed', () => {
    const body = `<p>Start <em>${Array.from({ length: 300 }, (_, i) => `w${i}`).join(' ')}</em> tail</p><p>Second paragraph.</p>`;
    const teaser = teaserOf(body);
    expectBalanced(teaser);
    expect(teaser).toMatch(/^<p>Start <em>w0 w1 .* w\d+…<\/em><\/p>$/);
    expect(text(teaser).length).toBeLessThanOrEqual(TEASER_MAX_CHARS + 1);
    expect(teaser).not.toContain('tail');
    expect(teaser).not.toContain('Second');
  });

  it('never gives the whole of a short story: one paragraph is cut in half, two keep only the first', () => {
    const one = '<p>One short paragraph that is the whole story of this article.</p>';
    const half = teaserOf(one);
    expect(half).toBe('<p>One short paragraph that is…</p>');
    expect(teaserOf(`${one}<p>And the end of it, a little longer than the first paragraph was.</p>`)).toBe(one);
  });

  it('never shows more than half of the text', () => {
    const body = `${paragraph(60)}${paragraph(5, 'x')}`;
    const teaser = teaserOf(body);
    expect(text(teaser).length).toBeLessThanOrEqual(text(body).length / 2);
    expectBalanced(teaser);
  });

  it('keeps an image before the first paragraph, but not one after the teaser ends', () => {
    const figure = '<figure><img src="https://img.example/a.jpg" alt="A" /></figure>';
    const late = '<figure><img src="https://img.example/late.jpg" alt="" /></figure>';
    const body = `${figure}<p>First.</p><p>Second.</p>${late}<p>Third, which stays behind the gate.</p>`;
    expect(teaserOf(body)).toBe(`${figure}\n<p>First.</p>\n<p>Second.</p>`);
  });

  it('leaves images out of a cut paragraph', () => {
    const body = `<p>${'word '.repeat(200)}<img src="https://img.example/a.jpg" alt="" /> more</p>`;
    expect(teaserOf(body)).not.toContain('<img');
  });

  it('counts lists, quotes and headings as blocks, and never cuts inside one it keeps', () => {
    const body = '<h2>Heading</h2><ul><li>one</li><li>two</li></ul><blockquote>Kept out</blockquote><p>Rest of the story here.</p>';
    const teaser = teaserOf(body);
    expect(teaser).toBe('<h2>Heading</h2>\n<ul><li>one</li><li>two</li></ul>');
    expectBalanced(teaser);
  });

  it('treats loose inline text at the top level as one block', () => {
    const body = `Loose text with <strong>bold</strong> words<br />on two lines<p>A paragraph.</p>${LONG_END}`;
    expect(teaserOf(body)).toBe('Loose text with <strong>bold</strong> words<br />on two lines\n<p>A paragraph.</p>');
  });

  it('counts an entity as one character and never cuts one in half', () => {
    const body = `<p>${'Tom &amp; Jerry '.repeat(100)}</p><p>More.</p>`;
    const teaser = teaserOf(body);
    expect(teaser).not.toMatch(/&[a-z]*…|&[a-z]*<\//);
    expect(teaser).toMatch(/(Jerry|&amp;|Tom)…<\/p>$/);
  });

  it('closes what a malformed body leaves open and drops stray closers', () => {
    expectBalanced(teaserOf(`</p><p>First <strong>open<p>Second.</p>${LONG_END}`));
    expect(teaserOf(`</em><p>First.</p><p>Second.</p>${LONG_END}`)).toBe('<p>First.</p>\n<p>Second.</p>');
  });

  it('drops a leading rule and comments, and answers empty for a body without text', () => {
    expect(teaserOf(`<hr /><!-- note --><p>First.</p><p>Second.</p>${LONG_END}`)).toBe('<p>First.</p>\n<p>Second.</p>');
    expect(teaserOf('')).toBe('');
    expect(teaserOf('<figure><img src="https://img.example/a.jpg" alt="" /></figure>')).toBe('');
    expect(teaserOf('<p>Word</p>')).toBe('');
  });
});

/** A small deterministic generator (mulberry32), so a failing body can be found again by its seed. */
function randomOf(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A body of the editor's allow-list: paragraphs with inline markup and entities, headings, lists, quotes, figures and rules. */
function randomBody(random: () => number): string {
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const words = (n: number) =>
    Array.from({ length: n }, () => pick(['council', 'harbour', 'vote', 'Tom &amp; Jerry', 'a', 'budget', 'x&lt;y', 'élan'])).join(' ');
  const inline = () =>
    Array.from({ length: 1 + Math.floor(random() * 4) }, () =>
      pick([
        () => words(1 + Math.floor(random() * 60)),
        () => `<strong>${words(1 + Math.floor(random() * 8))}</strong>`,
        () => `<em>${words(2)} <a href="https://x.example/a">${words(3)}</a></em>`,
        () => `${words(2)}<br />${words(2)}`,
      ])(),
    ).join(' ');
  const block = () =>
    pick([
      () => `<p>${inline()}</p>`,
      () => `<p>${inline()}</p>`,
      () => `<h2>${words(4)}</h2>`,
      () => `<ul><li>${inline()}</li><li>${words(5)}</li></ul>`,
      () => `<blockquote><p>${inline()}</p></blockquote>`,
      () => `<figure><img src="https://img.example/a.jpg" alt="" /><figcaption>${words(3)}</figcaption></figure>`,
      () => '<hr />',
    ])();
  return sanitizeBodyHtml(Array.from({ length: 1 + Math.floor(random() * 9) }, block).join(''));
}

describe('teaserOf on 500 generated bodies', () => {
  it('is balanced, sanitised, a beginning of the body, at most half its text and never all of it', () => {
    for (let seed = 1; seed <= 500; seed++) {
      const body = randomBody(randomOf(seed));
      const teaser = teaserOf(body);
      const context = `seed ${seed}: ${body}\n=> ${teaser}`;
      expectBalanced(teaser);
      expect(sanitizeBodyHtml(teaser), context).toBe(teaser);
      const shown = text(teaser).replace(/…$/, '');
      const whole = text(body);
      // Blocks are joined by a line break: compared without whitespace, the teaser's text opens the body's.
      expect(whole.replace(/\s+/g, '').startsWith(shown.replace(/\s+/g, '')), context).toBe(true);
      // +2: the line breaks the teaser puts between its blocks, which read as spaces.
      expect(shown.length, context).toBeLessThanOrEqual(Math.min(TEASER_MAX_CHARS, whole.length / 2) + 2);
      if (whole.length > 0) expect(shown.length, context).toBeLessThan(whole.length);
    }
  });
});

describe('publicBodyOf', () => {
  const body = `<p>First.</p><p>Second.</p>${LONG_END}`;

  it('answers the whole body of a public article, and of one stored before access levels', () => {
    expect(publicBodyOf({ bodyHtml: body, access: 'public' })).toBe(body);
    expect(publicBodyOf({ bodyHtml: body })).toBe(body);
    expect(isGated({})).toBe(false);
  });

  it('answers the teaser of a members-only or paid article', () => {
    for (const access of ['members', 'paid'] as const) {
      expect(isGated({ access })).toBe(true);
      expect(publicBodyOf({ bodyHtml: body, access })).toBe('<p>First.</p>\n<p>Second.</p>');
    }
  });
});
