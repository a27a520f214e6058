/**
 * Reads a rendered page as a person would (issue 37): words glued across an element boundary, doubled
 * spaces or punctuation in the laid-out text, and links or buttons without a name. Run it in the page,
 * `await page.evaluate(findCopyProblems, null)`: everything it needs is inside the one function, since
 * Playwright sends the function's source to the browser.
 */

export type CopyRule = 'glued' | 'double-space' | 'double-punctuation' | 'empty-name';

export type CopyFinding = {
  rule: CopyRule;
  /** A short CSS path of the element concerned, e.g. `section.cookie-banner > p > a[href="/cookies"]`. */
  element: string;
  /** The text around the problem as the browser lays it out; `|` marks a glued boundary. */
  text: string;
};

export function findCopyProblems(root?: Element | null): CopyFinding[] {
  const scope = root ?? document.body;
  const findings: CopyFinding[] = [];

  // Text in these is not laid out as prose, or not by us (an editor's field).
  const NOT_PROSE = 'script, style, noscript, template, textarea, select, svg, math, iframe, [contenteditable]';
  // Code keeps its spacing on purpose, and its highlighting may split a word anywhere.
  const CODE = 'pre, code, kbd, samp';
  // Footnote marks and ordinals sit on a word by design; a search highlight may cover part of a word.
  const GLUE_ALLOWED = 'sup, sub';
  const PART_WORD_ALLOWED = 'mark';
  // Something a reader sees between two texts even without a space: a line break, a picture, a control.
  const SEPARATORS = 'br, hr, img, svg, picture, video, audio, canvas, iframe, input, select, textarea, meter, progress';
  const WORD = /[\p{L}\p{N}]/u;
  const LETTER = /\p{L}/u;
  const CLOSING = /[.,;:!?…)\]}»%]/;
  const SENTENCE_END = /[.,;:!?]/;
  const OPENING = /[([{«¿¡]/;

  const visible = new Map<Element, boolean>();
  const isRendered = (element: Element): boolean => {
    let answer = visible.get(element);
    if (answer === undefined) {
      answer = element.checkVisibility({ visibilityProperty: true });
      visible.set(element, answer);
    }
    return answer;
  };

  const describe = (node: Node): string => {
    const parts: string[] = [];
    let element: Element | null = node instanceof Element ? node : node.parentElement;
    while (element && element !== document.documentElement && parts.length < 4) {
      let part = element.localName;
      if (element.id) part += `#${element.id}`;
      else {
        const testId = element.getAttribute('data-testid');
        const classes = [...element.classList].slice(0, 2);
        if (testId) part += `[data-testid="${testId}"]`;
        else if (classes.length > 0) part += `.${classes.join('.')}`;
      }
      const href = element.localName === 'a' ? element.getAttribute('href') : null;
      if (href !== null) part += `[href="${href.length > 40 ? `${href.slice(0, 40)}…` : href}"]`;
      parts.unshift(part);
      if (element.id) break;
      element = element.parentElement;
    }
    return parts.join(' > ');
  };

  /** The box a text flows in: inline-level boxes (inline, inline-block...) flow in their parent's. */
  const flowContainer = (node: Node): Element | null => {
    let element = node.parentElement;
    while (element && element !== scope) {
      const display = getComputedStyle(element).display;
      if (display !== 'contents' && !display.startsWith('inline') && !display.startsWith('ruby')) return element;
      element = element.parentElement;
    }
    return element;
  };

  // --- Glued words: two texts in the same line box, touching, with an element boundary between them.
  const texts: Text[] = [];
  const walker = document.createTreeWalker(scope, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const text = walker.currentNode as Text;
    const parent = text.parentElement;
    if (!parent || text.data.length === 0 || parent.closest(NOT_PROSE) || !isRendered(parent)) continue;
    texts.push(text);
  }
  /** Whether `right` follows `left` in the same element with nothing but comments between (React's `{a}{b}`). */
  const areSiblings = (left: Text, right: Text): boolean => {
    let node = left.nextSibling;
    while (node instanceof Comment) node = node.nextSibling;
    return node === right;
  };
  const selection = window.getSelection();
  for (let i = 1; i < texts.length; i++) {
    const left = texts[i - 1]!;
    const right = texts[i]!;
    const l = left.data.at(-1)!;
    const r = right.data[0]!;
    if (/\s/.test(l) || /\s/.test(r)) continue;
    const siblings = areSiblings(left, right);
    // Two texts in one element: only a sentence run into the next is a finding, not a word built from
    // parts (`subscriber{n === 1 ? '' : 's'}`).
    const glued = siblings
      ? SENTENCE_END.test(l) && LETTER.test(r)
      : (WORD.test(l) || CLOSING.test(l)) && (WORD.test(r) || OPENING.test(r));
    if (!glued) continue;
    const code = left.parentElement!.closest(CODE);
    if (code && code === right.parentElement!.closest(CODE)) continue;
    const container = flowContainer(left);
    if (container !== flowContainer(right)) continue;
    const boundary: Element[] = [];
    for (let e = left.parentElement; e && !e.contains(right); e = e.parentElement) boundary.push(e);
    for (let e = right.parentElement; e && !e.contains(left); e = e.parentElement) boundary.push(e);
    if (boundary.some((e) => e.matches(GLUE_ALLOWED))) continue;
    if (LETTER.test(l) && LETTER.test(r) && boundary.some((e) => e.matches(PART_WORD_ALLOWED))) continue;
    const range = document.createRange();
    range.setStart(left, left.data.length);
    range.setEnd(right, 0);
    if (range.cloneContents().querySelector(SEPARATORS)) continue;
    // As the browser lays it out: a selection's text is serialised like innerText (block breaks, hidden text
    // left out, text-transform applied, hence the case-blind comparison).
    const head = left.data.match(/\S{1,30}$/)![0];
    const tail = right.data.match(/^\S{1,30}/)![0];
    selection?.setBaseAndExtent(left, left.data.length - head.length, right, tail.length);
    if (selection && selection.toString().toLowerCase() !== `${head}${tail}`.toLowerCase()) continue;
    const element = boundary.find((e) => !e.contains(left)) ?? boundary[0] ?? left.parentElement!;
    const before = left.data.slice(-40).replace(/\s+/g, ' ').trimStart();
    const after = right.data.slice(0, 40).replace(/\s+/g, ' ').trimEnd();
    findings.push({ rule: 'glued', element: describe(element), text: `${before}|${after}` });
  }
  selection?.removeAllRanges();

  // --- Doubled spaces and punctuation in the laid-out text (innerText), outside code and form fields.
  const laidOut = (scope as HTMLElement).innerText.replace(/\u00a0/g, ' ');
  const rules: { rule: CopyRule; pattern: RegExp }[] = [
    { rule: 'double-space', pattern: /(?<=\S) {2,}(?=\S)/g },
    // `..` but not an ellipsis or a `../` path; `,,` `;;` `,.` and the like; `?.` `!.`.
    { rule: 'double-punctuation', pattern: /(?<!\.)\.\.(?![./])|[,;][,;.]|:[,;.]|[!?]\.(?!\.)/g },
    // A space before a comma, or before a sentence's end (not ` .com`, not `:)`).
    { rule: 'double-punctuation', pattern: / ,| [.;:!?](?=\s|$|["'”’)\]])/g },
  ];
  /** The deepest element whose laid-out text holds `snippet`. */
  const locate = (snippet: string): Element => {
    let found: Element = scope;
    for (;;) {
      const child = [...found.children].find(
        (c) => c instanceof HTMLElement && isRendered(c) && c.innerText.replace(/\u00a0/g, ' ').includes(snippet),
      );
      if (!child) return found;
      found = child;
    }
  };
  for (const { rule, pattern } of rules) {
    for (const match of laidOut.matchAll(pattern)) {
      const start = match.index;
      const end = start + match[0].length;
      const lineStart = laidOut.lastIndexOf('\n', start - 1) + 1;
      const lineEnd = laidOut.indexOf('\n', end);
      const line = laidOut.slice(lineStart, lineEnd === -1 ? undefined : lineEnd);
      const snippet = laidOut.slice(Math.max(lineStart, start - 12), Math.min(lineStart + line.length, end + 12));
      const element = locate(snippet);
      if (element.closest(`${NOT_PROSE}, ${CODE}`)) continue;
      // Code inline in a sentence: the snippet's element is the sentence, the doubled characters may be the code's.
      if ([...element.querySelectorAll(CODE)].some((code) => (code as HTMLElement).innerText.includes(match[0]))) continue;
      const context = laidOut.slice(Math.max(lineStart, start - 40), Math.min(lineStart + line.length, end + 40));
      findings.push({ rule, element: describe(element), text: context });
    }
  }

  // --- Links and buttons a screen reader would announce without a name.
  const nameOf = (element: Element): string => {
    const labelledBy = element.getAttribute('aria-labelledby');
    if (labelledBy) {
      const named = labelledBy
        .split(/\s+/)
        .map((id) => document.getElementById(id)?.textContent ?? '')
        .join(' ')
        .trim();
      if (named) return named;
    }
    const label = element.getAttribute('aria-label')?.trim();
    if (label) return label;
    if (element instanceof HTMLInputElement) {
      if (element.type === 'image') return element.alt.trim();
      // A submit or reset button without a value is named by the browser ("Submit", "Reset").
      return element.value.trim() || (element.type === 'submit' || element.type === 'reset' ? element.type : '');
    }
    const fromContent = (node: Node): string => {
      if (node instanceof Text) return node.data;
      if (!(node instanceof Element) || node.getAttribute('aria-hidden') === 'true' || !isRendered(node)) return '';
      if (node instanceof HTMLImageElement) return node.alt;
      if (node.localName === 'svg') return node.getAttribute('aria-label') ?? node.querySelector('title')?.textContent ?? '';
      const ownLabel = node.getAttribute('aria-label');
      if (ownLabel) return ownLabel;
      return [...node.childNodes].map(fromContent).join('');
    };
    return [...element.childNodes].map(fromContent).join('').trim() || (element.getAttribute('title')?.trim() ?? '');
  };
  const controls = scope.querySelectorAll(
    'a[href], button, [role="button"], [role="link"], input[type="button"], input[type="submit"], input[type="reset"], input[type="image"]',
  );
  for (const control of controls) {
    if (control.closest('[aria-hidden="true"], [inert]') || !isRendered(control)) continue;
    if (nameOf(control)) continue;
    const role = control.localName === 'a' || control.getAttribute('role') === 'link' ? 'link' : 'button';
    findings.push({
      rule: 'empty-name',
      element: describe(control),
      text: `a ${role} with no accessible name: ${control.outerHTML.slice(0, 160)}`,
    });
  }
  return findings;
}

/** One finding a line, for a failure message. */
export function formatCopyFindings(findings: CopyFinding[]): string {
  return findings.map((f) => `  ${f.rule}: "${f.text}" at ${f.element}`).join('\n');
}
