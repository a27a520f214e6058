/**
 * What of an article's body may leave the server for anyone (issue 48): the whole body of a public
 * article, the teaser of a gated one. It sits beside the schemas because every layer that lets a body
 * out needs it, the store's search indexing among them, and the store may import nothing else of ours.
 */
import type { ArticleRecord } from './article.ts';
import { canReadAccess } from './member.ts';

/** Top-level blocks with text a teaser holds at most. */
export const TEASER_MAX_BLOCKS = 2;
/** Characters of text (whitespace runs and entities counted as one) a teaser holds at most. */
export const TEASER_MAX_CHARS = 600;

/** Elements the sanitiser keeps that start a block of their own at the top level (docs/product.md's allow-list). */
const BLOCK_TAGS = new Set(['p', 'h2', 'h3', 'h4', 'ul', 'ol', 'li', 'blockquote', 'figure', 'figcaption', 'pre', 'hr']);
const VOID_TAGS = new Set(['img', 'br', 'hr']);

type Token = { kind: 'open' | 'close' | 'void'; name: string; raw: string } | { kind: 'text'; raw: string };

/** A top-level block: its tokens, how much text it holds, and whether it is a rule (hr). */
type Block = { tokens: Token[]; text: number; rule: boolean };

const TAG = /<!--[\s\S]*?(?:-->|$)|<(\/?)([a-zA-Z][a-zA-Z0-9]*)\b[^>]*>/g;
/** One unit of visible text: an entity, a run of whitespace, or one character. */
const UNIT = /&(?:[a-zA-Z][a-zA-Z0-9]*|#[0-9]+|#x[0-9a-fA-F]+);|\s+|[\s\S]/g;

function tokenize(html: string): Token[] {
  const tokens: Token[] = [];
  let last = 0;
  for (const match of html.matchAll(TAG)) {
    if (match.index > last) tokens.push({ kind: 'text', raw: html.slice(last, match.index) });
    last = match.index + match[0].length;
    const name = match[2]?.toLowerCase();
    if (!name) continue; // a comment: never shown
    const raw = match[0];
    if (match[1]) tokens.push({ kind: 'close', name, raw });
    else tokens.push({ kind: VOID_TAGS.has(name) || raw.endsWith('/>') ? 'void' : 'open', name, raw });
  }
  if (last < html.length) tokens.push({ kind: 'text', raw: html.slice(last) });
  return tokens;
}

/** Visible characters of a text token: a whitespace run and an entity count as one each. */
function textLength(raw: string): number {
  return raw.match(UNIT)?.length ?? 0;
}

/** Splits a body into its top-level blocks; inline content at the top level (text, links, images) between blocks is one block. */
function splitBlocks(html: string): Block[] {
  const blocks: Block[] = [];
  let current: Block | undefined;
  let inline = false;
  const stack: string[] = [];
  const start = (isInline: boolean) => {
    current = { tokens: [], text: 0, rule: false };
    inline = isInline;
    blocks.push(current);
  };
  for (const token of tokenize(html)) {
    if (stack.length === 0) {
      if (token.kind === 'close') continue; // a closer without its opener
      if (token.kind === 'text' && !token.raw.trim() && (!current || !inline)) continue;
      const isBlock = token.kind !== 'text' && BLOCK_TAGS.has(token.name);
      if (isBlock || !current || !inline) start(!isBlock);
      if (token.kind === 'void' && token.name === 'hr') current!.rule = true;
    }
    const block = current!;
    block.tokens.push(token);
    if (token.kind === 'open') stack.push(token.name);
    else if (token.kind === 'close') {
      const at = stack.lastIndexOf(token.name);
      if (at >= 0) stack.length = at;
      else block.tokens.pop(); // a closer without its opener
    }
    // A block element at the top level ends its block when it closes.
    if (stack.length === 0 && token.kind !== 'text' && BLOCK_TAGS.has(token.name)) current = undefined;
  }
  // Whitespace runs count once, and not at a block's edges.
  for (const block of blocks)
    block.text = textLength(
      block.tokens
        .map((t) => (t.kind === 'text' ? t.raw : ' '))
        .join('')
        .trim(),
    );
  return blocks;
}

/** The closers of the elements a token list leaves open (malformed input, or a cut), innermost first. */
function closersOf(tokens: readonly Token[]): string {
  const stack: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'open') stack.push(token.name);
    else if (token.kind === 'close') {
      const at = stack.lastIndexOf(token.name);
      if (at >= 0) stack.length = at;
    }
  }
  return stack
    .reverse()
    .map((name) => `</${name}>`)
    .join('');
}

function blockHtml(block: Block): string {
  return block.tokens.map((t) => t.raw).join('') + closersOf(block.tokens);
}

/**
 * A block cut after at most `budget` characters of text, at a word's end, with an ellipsis, every
 * element it opened closed; images are left out. Empty when not one word fits.
 */
function cutBlock(block: Block, budget: number): string {
  const out: Token[] = [];
  let used = 0;
  let words = false;
  for (const token of block.tokens) {
    if (token.kind === 'void') {
      if (token.name !== 'img') out.push(token);
      continue;
    }
    if (token.kind !== 'text') {
      out.push(token);
      continue;
    }
    const units = token.raw.match(UNIT) ?? [];
    if (used + units.length <= budget) {
      out.push(token);
      used += units.length;
      words ||= token.raw.trim() !== '';
      continue;
    }
    // The last whitespace within the budget ends the last whole word of this text.
    const room = units.slice(0, Math.max(0, budget - used) + 1);
    let end = room.length - 1;
    while (end >= 0 && !/^\s/.test(room[end]!)) end--;
    const kept = end > 0 ? units.slice(0, end).join('').trimEnd() : '';
    if (kept) {
      out.push({ kind: 'text', raw: kept });
      words = true;
    }
    if (!words) return '';
    return `${out.map((t) => t.raw).join('')}…${closersOf(out)}`;
  }
  return words ? out.map((t) => t.raw).join('') + closersOf(out) : '';
}

/**
 * The teaser of a sanitised body: its first top-level blocks (at most TEASER_MAX_BLOCKS with text and
 * TEASER_MAX_CHARS characters, images before them kept), never more than half of its text and never
 * all of its blocks, so a short story keeps its end behind the gate too. Whole blocks when the first
 * fits; a first block longer than that is cut at a word's end, its elements closed.
 */
export function teaserOf(bodyHtml: string): string {
  const blocks = splitBlocks(bodyHtml);
  const withText = blocks.filter((b) => b.text > 0);
  if (withText.length === 0) return '';
  const total = withText.reduce((sum, b) => sum + b.text, 0);
  const budget = Math.min(TEASER_MAX_CHARS, Math.floor(total / 2));
  const maxBlocks = Math.min(TEASER_MAX_BLOCKS, withText.length - 1);
  const taken: string[] = [];
  let pending: string[] = [];
  let used = 0;
  let count = 0;
  for (const block of blocks) {
    if (block.text === 0) {
      // Images and rules go with the text that follows them; a rule never opens the teaser.
      if (!(block.rule && taken.length === 0 && pending.length === 0)) pending.push(blockHtml(block));
      continue;
    }
    if (count >= maxBlocks || used + block.text > budget) {
      if (count === 0) {
        const cut = cutBlock(block, budget);
        return cut ? [...pending.filter((html) => !/^<hr\b/.test(html)), cut].join('\n') : '';
      }
      break;
    }
    taken.push(...pending, blockHtml(block));
    pending = [];
    used += block.text;
    count++;
  }
  return taken.join('\n');
}

/** Whether an article keeps part of its body behind the gate. */
export function isGated(article: Pick<ArticleRecord, 'access'>): boolean {
  return !canReadAccess(article.access, 'anonymous');
}

/** The body anyone may be shown: the whole of a public article, the teaser of a gated one. Every body leaving the server passes here. */
export function publicBodyOf(article: Pick<ArticleRecord, 'bodyHtml' | 'access'>): string {
  return isGated(article) ? teaserOf(article.bodyHtml) : article.bodyHtml;
}
