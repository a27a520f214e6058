/**
 * The visual view's document model (Tiptap on ProseMirror): the elements the server's sanitiser allows,
 * a figure with its image and caption, and a locked block that keeps HTML the view cannot show, exactly.
 */
import { Extension, Node, mergeAttributes, type Editor, type Extensions } from '@tiptap/core';
import StarterKit from '@tiptap/starter-kit';
import Heading from '@tiptap/extension-heading';
import { isAllowedLink } from './link-url.ts';

/** Elements the visual view edits; anything else makes its top-level block a locked block. */
const SUPPORTED_TAGS = new Set([
  'P',
  'H1',
  'H2',
  'H3',
  'H4',
  'H5',
  'H6',
  'STRONG',
  'B',
  'EM',
  'I',
  'A',
  'UL',
  'OL',
  'LI',
  'BLOCKQUOTE',
  'FIGURE',
  'IMG',
  'FIGCAPTION',
  'CODE',
  'PRE',
  'BR',
  'HR',
]);

/** Embeds a writer may paste: they stay as they are, in a locked block (embeds are not a feature yet). */
const EMBED_SELECTOR = 'iframe,object,embed,video,audio,blockquote.twitter-tweet,blockquote.instagram-media,blockquote.tiktok-embed';

export const LOCKED_SENTENCE = "This part can't be shown in the visual view. Edit it in HTML.";

function isBlank(node: ChildNode): boolean {
  return node.nodeType === 3 && !(node.textContent ?? '').trim();
}

/** A figure the visual view can hold: one image, then at most a caption of plain text. */
function isSimpleFigure(figure: Element): boolean {
  const parts = [...figure.childNodes].filter((node) => !isBlank(node));
  const [image, caption, ...rest] = parts;
  if (rest.length > 0 || !(image instanceof HTMLImageElement)) return false;
  if (caption === undefined) return true;
  return caption instanceof HTMLElement && caption.tagName === 'FIGCAPTION' && caption.children.length === 0;
}

/** Whether the visual view can show an element and everything in it without losing what readers would see. */
function isSupported(element: Element): boolean {
  if (!SUPPORTED_TAGS.has(element.tagName)) return false;
  if (element.tagName === 'FIGURE') return isSimpleFigure(element);
  // An image outside a figure, or a link the editor would refuse, cannot be kept as it is.
  if (element.tagName === 'IMG') return element.parentElement?.tagName === 'FIGURE';
  if (element.tagName === 'A' && !isAllowedLink(element.getAttribute('href') ?? '')) return false;
  if (
    (element.tagName === 'UL' || element.tagName === 'OL') &&
    [...element.childNodes].some((n) => !isBlank(n) && !(n instanceof HTMLLIElement))
  )
    return false;
  for (const child of element.childNodes) {
    if (child.nodeType === 8) return false;
    if (child instanceof Element && !isSupported(child)) return false;
  }
  return true;
}

function lockedElement(doc: Document, html: string): HTMLElement {
  const div = doc.createElement('div');
  div.setAttribute('data-locked-html', html);
  return div;
}

/** The body HTML as the visual view loads it: each top-level part it cannot show becomes a locked block. */
export function prepareForVisual(html: string): string {
  const template = document.createElement('template');
  template.innerHTML = html;
  for (const node of [...template.content.childNodes]) {
    if (node instanceof Element && !isSupported(node)) node.replaceWith(lockedElement(document, node.outerHTML));
    else if (node.nodeType === 8) node.replaceWith(lockedElement(document, `<!--${node.textContent ?? ''}-->`));
  }
  return template.innerHTML;
}

/** One declaration of an element's style attribute, read from its text (the page's CSP keeps pasted styles from applying). */
function readStyle(element: Element, property: string): string | undefined {
  const match = new RegExp(`(?:^|;)\\s*${property}\\s*:\\s*([^;]+)`, 'i').exec(element.getAttribute('style') ?? '');
  return match?.[1]?.trim().toLowerCase();
}

/** Bold and italic written as styles (Google Docs' and Word's spans) become <strong> and <em>; every style attribute goes. */
function applyInlineStyles(root: DocumentFragment): void {
  for (const element of [...root.querySelectorAll('[style]')]) {
    const weight = readStyle(element, 'font-weight') ?? '';
    const italic = readStyle(element, 'font-style') === 'italic';
    element.removeAttribute('style');
    const isBold = element.tagName === 'B' || element.tagName === 'STRONG';
    if (isBold && /^(normal|[1-4]00)$/.test(weight)) {
      element.replaceWith(...element.childNodes);
      continue;
    }
    const wrap = (tag: string) => {
      const wrapper = element.ownerDocument.createElement(tag);
      wrapper.append(...element.childNodes);
      element.append(wrapper);
    };
    if (!isBold && /^(bold(er)?|[6-9]00)$/.test(weight)) wrap('strong');
    if (italic && element.tagName !== 'I' && element.tagName !== 'EM') wrap('em');
  }
}

/** Pasted HTML as the visual view takes it: embeds become locked blocks; scripts, styles and comments go. */
export function preparePaste(html: string): string {
  const template = document.createElement('template');
  template.innerHTML = html;
  const content = template.content;
  for (const embed of [...content.querySelectorAll(EMBED_SELECTOR)]) embed.replaceWith(lockedElement(document, embed.outerHTML));
  for (const dropped of [...content.querySelectorAll('script,style,meta,link,title,noscript,template')]) dropped.remove();
  // Google Docs wraps a copy in a <b> that is not bold, and marks its blank lines with <br>s between the paragraphs.
  for (const wrapper of [...content.querySelectorAll('b[id^="docs-internal-guid"]')]) {
    for (const gap of [...wrapper.children].filter((child) => child.tagName === 'BR')) gap.remove();
    wrapper.replaceWith(...wrapper.childNodes);
  }
  for (const gap of [...content.querySelectorAll('br.Apple-interchange-newline')]) gap.remove();
  applyInlineStyles(content);
  const walker = document.createTreeWalker(content, NodeFilter.SHOW_COMMENT);
  const comments: Node[] = [];
  while (walker.nextNode()) comments.push(walker.currentNode as unknown as Node);
  for (const comment of comments) (comment as unknown as ChildNode).remove();
  return template.innerHTML;
}

/** Whether pasted plain text is embed code (an iframe or a social post's snippet) rather than prose. */
export function isEmbedCode(text: string): boolean {
  return /^\s*<(iframe|blockquote|script|embed|object|video|audio|div)\b[\s\S]*>\s*$/i.test(text);
}

/** The HTML of the visual document: locked blocks give back their HTML, and a list item holding one paragraph is written without it. */
export function serializeVisual(editor: Editor): string {
  if (editor.isEmpty) return '';
  const template = document.createElement('template');
  template.innerHTML = editor.getHTML();
  const locked: string[] = [];
  for (const div of [...template.content.querySelectorAll('div[data-locked-html]')]) {
    locked.push(div.getAttribute('data-locked-html') ?? '');
    div.replaceWith(document.createComment(`locked:${locked.length - 1}`));
  }
  // <li>text<ul>...</ul></li> is how lists are written by hand: one paragraph, maybe followed by nested lists.
  for (const item of template.content.querySelectorAll('li')) {
    const [first, ...rest] = [...item.childNodes].filter((node) => !isBlank(node));
    const onlyLists = rest.every((node) => node instanceof HTMLUListElement || node instanceof HTMLOListElement);
    if (first instanceof HTMLParagraphElement && onlyLists) first.replaceWith(...first.childNodes);
  }
  // Empty paragraphs at the end (where the cursor waited after a block) are not part of the story.
  while (template.content.lastChild instanceof HTMLParagraphElement && !template.content.lastChild.hasChildNodes())
    template.content.lastChild.remove();
  return template.innerHTML.replace(/<!--locked:(\d+)-->/g, (_, index: string) => locked[Number(index)] ?? '');
}

/** A block of HTML the visual view cannot show: kept byte for byte, shown as code with a plain sentence. */
export const LockedHtml = Node.create({
  name: 'lockedHtml',
  group: 'block',
  atom: true,
  selectable: true,
  draggable: false,
  addAttributes() {
    return {
      html: {
        default: '',
        parseHTML: (element) => element.getAttribute('data-locked-html') ?? '',
        renderHTML: (attributes) => ({ 'data-locked-html': attributes.html as string }),
      },
    };
  },
  parseHTML() {
    return [{ tag: 'div[data-locked-html]' }];
  },
  renderHTML({ HTMLAttributes }) {
    return ['div', HTMLAttributes];
  },
  addNodeView() {
    return ({ node }) => {
      const dom = document.createElement('div');
      dom.className = 've-locked';
      dom.contentEditable = 'false';
      dom.setAttribute('data-testid', 'locked-html');
      const note = document.createElement('p');
      note.className = 've-locked-note';
      note.textContent = LOCKED_SENTENCE;
      const code = document.createElement('pre');
      code.className = 've-locked-code';
      // textContent, never innerHTML: the kept HTML is shown as text and nothing in it runs or loads.
      code.textContent = node.attrs.html as string;
      dom.append(note, code);
      return { dom };
    };
  },
});

/** An image with its alt text and caption, as the sanitiser allows it: <figure><img><figcaption>. */
export const Figure = Node.create({
  name: 'figure',
  group: 'block',
  atom: true,
  draggable: true,
  addAttributes() {
    return {
      src: { default: '' },
      alt: { default: '' },
      caption: { default: '' },
      width: { default: null },
      height: { default: null },
      loading: { default: null },
    };
  },
  parseHTML() {
    return [
      {
        tag: 'figure',
        getAttrs: (element) => {
          const image = element.querySelector('img');
          if (!image) return false;
          return {
            src: image.getAttribute('src') ?? '',
            alt: image.getAttribute('alt') ?? '',
            caption: element.querySelector('figcaption')?.textContent ?? '',
            width: image.getAttribute('width'),
            height: image.getAttribute('height'),
            loading: image.getAttribute('loading'),
          };
        },
      },
    ];
  },
  renderHTML({ node }) {
    const { src, alt, caption, width, height, loading } = node.attrs as Record<string, string | null>;
    const image = ['img', mergeAttributes({ src, alt }, width ? { width } : {}, height ? { height } : {}, loading ? { loading } : {})];
    return caption ? ['figure', {}, image, ['figcaption', {}, caption]] : ['figure', {}, image];
  },
});

/** The editor's extensions: StarterKit without what the sanitiser drops (strike, underline), links checked by our rule. */
export function createExtensions(options: { onLinkShortcut: () => void }): Extensions {
  return [
    // Mod-K opens the link dialog, as in most editors.
    Extension.create({
      name: 'linkShortcut',
      addKeyboardShortcuts: () => ({
        'Mod-k': () => {
          options.onLinkShortcut();
          return true;
        },
      }),
    }),
    StarterKit.configure({
      strike: false,
      underline: false,
      heading: false,
      trailingNode: false,
      link: {
        openOnClick: false,
        autolink: true,
        linkOnPaste: true,
        // No target/rel of our own: the server adds them to external links when it sanitises.
        HTMLAttributes: { target: null, rel: null, class: null },
        isAllowedUri: (url) => isAllowedLink(url),
        shouldAutoLink: (url) => isAllowedLink(url),
      },
    }),
    // h1, h5 and h6 read as the sanitiser stores them (h2 and h4).
    Heading.extend({
      parseHTML() {
        return [
          { tag: 'h1', attrs: { level: 2 } },
          { tag: 'h2', attrs: { level: 2 } },
          { tag: 'h3', attrs: { level: 3 } },
          { tag: 'h4', attrs: { level: 4 } },
          { tag: 'h5', attrs: { level: 4 } },
          { tag: 'h6', attrs: { level: 4 } },
        ];
      },
    }).configure({ levels: [2, 3, 4] }),
    Figure,
    LockedHtml,
  ];
}
