/**
 * The visual view of the article body: a Tiptap editor with a toolbar, a link dialog and inline images.
 * It writes bodyHtml only after an edit made in it, so opening it never changes the text.
 */
import { useEffect, useLayoutEffect, useReducer, useRef, useState, type KeyboardEvent } from 'react';
import { Editor } from '@tiptap/core';
import { createExtensions, isEmbedCode, prepareForVisual, preparePaste, serializeVisual } from './visual-body.ts';
import { LinkDialog } from './LinkDialog.tsx';
import { ImageDialog, type InlineImage } from './ImageDialog.tsx';

/** How long after the last keystroke the view writes its HTML to the form. */
const WRITE_DELAY_MS = 300;

type Props = { html: string; onChange: (html: string) => void; labelledBy: string; describedBy?: string };

type Tool = {
  key: string;
  label: string;
  text: string;
  shortcut?: string;
  active?: () => boolean;
  run: () => void;
  disabled?: () => boolean;
};

/**
 * The selection as the browser holds it: a shortcut pressed right after Shift+Home can arrive before
 * ProseMirror has read the selection's change into its state.
 */
function readSelection(editor: Editor): { from: number; to: number } {
  const selection = window.getSelection();
  const { anchorNode, focusNode } = selection ?? {};
  if (selection && anchorNode && focusNode && editor.view.dom.contains(anchorNode) && editor.view.dom.contains(focusNode)) {
    const anchor = editor.view.posAtDOM(anchorNode, selection.anchorOffset);
    const head = editor.view.posAtDOM(focusNode, selection.focusOffset);
    return { from: Math.min(anchor, head), to: Math.max(anchor, head) };
  }
  const { from, to } = editor.state.selection;
  return { from, to };
}

export default function VisualEditor({ html, onChange, labelledBy, describedBy }: Props) {
  const host = useRef<HTMLDivElement>(null);
  const [editor, setEditor] = useState<Editor | undefined>();
  /** The HTML this view last loaded or wrote: a different value from outside (a reload, a restore) is loaded again. */
  const known = useRef(html);
  const onChangeRef = useRef(onChange);
  useLayoutEffect(() => {
    onChangeRef.current = onChange;
  });
  /** Opens the link dialog from the editor's Mod-K (the editor is built once; this follows the latest render). */
  const linkShortcut = useRef(() => {});
  const [, refresh] = useReducer((n: number) => n + 1, 0);
  const [linkOpen, setLinkOpen] = useState(false);
  /** The text a link is for, kept while the dialog has the focus. */
  const [linkRange, setLinkRange] = useState({ from: 0, to: 0 });
  const [imageOpen, setImageOpen] = useState(false);
  const [focusIndex, setFocusIndex] = useState(0);
  const toolbar = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (!host.current) return;
    let pending: number | undefined;
    let dirty = false;
    const created = new Editor({
      element: host.current,
      extensions: createExtensions({ onLinkShortcut: () => linkShortcut.current() }),
      content: prepareForVisual(known.current),
      // Tiptap's own <style> tag would be refused by the page's Content-Security-Policy: its rules are in admin.css.
      injectCSS: false,
      editorProps: {
        attributes: {
          class: 've-content',
          role: 'textbox',
          'aria-multiline': 'true',
          'aria-labelledby': labelledBy,
          ...(describedBy ? { 'aria-describedby': describedBy } : {}),
          'data-testid': 'visual-editor',
        },
        transformPastedHTML: preparePaste,
        handlePaste: (_view, event) => {
          const data = event.clipboardData;
          const text = data?.getData('text/plain') ?? '';
          if (data?.getData('text/html') || !isEmbedCode(text)) return false;
          // A paragraph after the block takes the cursor: typing on must not replace the embed just pasted.
          created.commands.insertContent([{ type: 'lockedHtml', attrs: { html: text.trim() } }, { type: 'paragraph' }]);
          return true;
        },
      },
      // The HTML of a long article takes milliseconds to write and the form re-renders on it (preview, word
      // count): it is written once typing pauses, and at once when the text loses focus or the view closes.
      onUpdate: () => {
        dirty = true;
        window.clearTimeout(pending);
        pending = window.setTimeout(write, WRITE_DELAY_MS);
      },
      onBlur: () => write(),
      onTransaction: () => refresh(),
    });
    function write() {
      window.clearTimeout(pending);
      if (!dirty) return;
      dirty = false;
      const next = serializeVisual(created);
      known.current = next;
      onChangeRef.current(next);
    }
    // A press anywhere outside the text (Save, Publish, a tab) writes first, so the click's handler reads the latest text.
    const onPointerDown = (event: PointerEvent) => {
      if (!created.view.dom.contains(event.target as Node)) write();
    };
    document.addEventListener('pointerdown', onPointerDown, true);
    setEditor(created);
    return () => {
      document.removeEventListener('pointerdown', onPointerDown, true);
      write();
      created.destroy();
    };
  }, [labelledBy, describedBy]);

  // A change from outside the view (a conflict's Reload, a restored revision or kept text) is loaded, without writing back.
  useEffect(() => {
    if (!editor || html === known.current) return;
    known.current = html;
    editor.commands.setContent(prepareForVisual(html), { emitUpdate: false });
  }, [editor, html]);

  const chain = () => editor!.chain().focus();
  const isActive = (name: string, attrs?: Record<string, unknown>) => editor?.isActive(name, attrs) ?? false;
  const tools: Tool[] = [
    {
      key: 'h2',
      label: 'Heading 2',
      text: 'H2',
      shortcut: 'Control+Alt+2',
      active: () => isActive('heading', { level: 2 }),
      run: () => chain().toggleHeading({ level: 2 }).run(),
    },
    {
      key: 'h3',
      label: 'Heading 3',
      text: 'H3',
      shortcut: 'Control+Alt+3',
      active: () => isActive('heading', { level: 3 }),
      run: () => chain().toggleHeading({ level: 3 }).run(),
    },
    {
      key: 'h4',
      label: 'Heading 4',
      text: 'H4',
      shortcut: 'Control+Alt+4',
      active: () => isActive('heading', { level: 4 }),
      run: () => chain().toggleHeading({ level: 4 }).run(),
    },
    { key: 'bold', label: 'Bold', text: 'B', shortcut: 'Control+B', active: () => isActive('bold'), run: () => chain().toggleBold().run() },
    {
      key: 'italic',
      label: 'Italic',
      text: 'I',
      shortcut: 'Control+I',
      active: () => isActive('italic'),
      run: () => chain().toggleItalic().run(),
    },
    { key: 'link', label: 'Link', text: 'Link', shortcut: 'Control+K', active: () => isActive('link'), run: () => openLink() },
    {
      key: 'ul',
      label: 'Bulleted list',
      text: '• List',
      shortcut: 'Control+Shift+8',
      active: () => isActive('bulletList'),
      run: () => chain().toggleBulletList().run(),
    },
    {
      key: 'ol',
      label: 'Numbered list',
      text: '1. List',
      shortcut: 'Control+Shift+7',
      active: () => isActive('orderedList'),
      run: () => chain().toggleOrderedList().run(),
    },
    {
      key: 'quote',
      label: 'Quote',
      text: '“ Quote',
      shortcut: 'Control+Shift+B',
      active: () => isActive('blockquote'),
      run: () => chain().toggleBlockquote().run(),
    },
    {
      key: 'code',
      label: 'Inline code',
      text: '</>',
      shortcut: 'Control+E',
      active: () => isActive('code'),
      run: () => chain().toggleCode().run(),
    },
    {
      key: 'pre',
      label: 'Code block',
      text: '{ }',
      shortcut: 'Control+Alt+C',
      active: () => isActive('codeBlock'),
      run: () => chain().toggleCodeBlock().run(),
    },
    { key: 'hr', label: 'Horizontal rule', text: '―', run: () => chain().setHorizontalRule().run() },
    { key: 'image', label: 'Image', text: 'Image', run: () => setImageOpen(true) },
    {
      key: 'undo',
      label: 'Undo',
      text: '↶',
      shortcut: 'Control+Z',
      run: () => chain().undo().run(),
      disabled: () => !editor?.can().undo(),
    },
    {
      key: 'redo',
      label: 'Redo',
      text: '↷',
      shortcut: 'Control+Shift+Z',
      run: () => chain().redo().run(),
      disabled: () => !editor?.can().redo(),
    },
  ];

  // One tab stop for the whole toolbar; arrow keys move along it (the WAI-ARIA toolbar pattern).
  const onToolbarKey = (event: KeyboardEvent<HTMLDivElement>) => {
    const moves: Record<string, number> = { ArrowRight: 1, ArrowLeft: -1, Home: -focusIndex, End: tools.length - 1 - focusIndex };
    const move = moves[event.key];
    if (move === undefined) return;
    event.preventDefault();
    const next = (focusIndex + move + tools.length) % tools.length;
    setFocusIndex(next);
    toolbar.current?.querySelectorAll('button')[next]?.focus();
  };

  const openLink = () => {
    if (!editor) return;
    setLinkRange(readSelection(editor));
    setLinkOpen(true);
  };

  useLayoutEffect(() => {
    linkShortcut.current = openLink;
  });

  // The figure goes in once the dialog has closed: while it is open, the text outside it cannot take the focus.
  const pendingImage = useRef<InlineImage | undefined>(undefined);
  const insertImage = (image: InlineImage) => {
    pendingImage.current = image;
    setImageOpen(false);
  };
  useEffect(() => {
    const image = pendingImage.current;
    if (imageOpen || !editor || !image) return;
    pendingImage.current = undefined;
    editor
      .chain()
      .focus()
      .insertContent({ type: 'figure', attrs: { ...image } })
      .run();
    // Tiptap leaves the new figure selected, and a key would replace it: the cursor goes to the text after it.
    const after = editor.state.selection.to;
    const next = editor.chain().focus();
    if (editor.state.doc.resolve(after).nodeAfter?.isTextblock) next.setTextSelection(after + 1).run();
    else
      next
        .insertContentAt(after, { type: 'paragraph' })
        .setTextSelection(after + 1)
        .run();
    // Tiptap's focus lands a frame later; a key typed before it (a busy machine) went to the page, not the text.
    editor.view.focus();
  }, [imageOpen, editor]);

  return (
    <div className="ve">
      <div
        ref={toolbar}
        className="ve-toolbar"
        role="toolbar"
        aria-label="Formatting"
        aria-controls="visual-body-content"
        onKeyDown={onToolbarKey}
      >
        {tools.map((tool, index) => {
          const pressed = tool.active ? tool.active() : undefined;
          return (
            <button
              key={tool.key}
              type="button"
              className="ve-tool"
              tabIndex={index === focusIndex ? 0 : -1}
              aria-pressed={pressed}
              aria-keyshortcuts={tool.shortcut}
              title={tool.shortcut ? `${tool.label} (${tool.shortcut.replace('Control', 'Ctrl')})` : tool.label}
              disabled={!editor || (tool.disabled?.() ?? false)}
              onFocus={() => setFocusIndex(index)}
              // Keep the text's selection: a mouse click on a tool must not move focus out of the editor first.
              onMouseDown={(event) => event.preventDefault()}
              onClick={tool.run}
              data-tool={tool.key}
            >
              {/* The name is the label; the short sign is what sighted writers scan for. */}
              <span aria-hidden="true">{tool.text}</span>
              <span className="adm-sr-only">{tool.label}</span>
            </button>
          );
        })}
      </div>
      <div ref={host} id="visual-body-content" className="ve-host" />
      {linkOpen && editor && (
        <LinkDialog
          initial={(editor.getAttributes('link').href as string | undefined) ?? ''}
          hasLink={editor.isActive('link')}
          onClose={() => {
            setLinkOpen(false);
            editor.commands.focus();
          }}
          onApply={(href) => {
            setLinkOpen(false);
            const range = linkRange;
            const base = chain().setTextSelection(range);
            if (range.from === range.to && !editor.isActive('link')) {
              base.insertContent({ type: 'text', text: href, marks: [{ type: 'link', attrs: { href } }] }).run();
            } else {
              base.extendMarkRange('link').setLink({ href }).run();
            }
          }}
          onRemove={() => {
            setLinkOpen(false);
            chain().setTextSelection(linkRange).extendMarkRange('link').unsetLink().run();
          }}
        />
      )}
      {imageOpen && (
        <ImageDialog
          onClose={() => {
            setImageOpen(false);
            editor?.commands.focus();
          }}
          onInsert={insertImage}
        />
      )}
    </div>
  );
}
