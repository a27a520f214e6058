/**
 * The article body with two views of one bodyHtml: Visual (a rich-text editor, loaded only when chosen)
 * and HTML (the specification's text area, unchanged). Switching views never changes the text.
 */
import { lazy, Suspense, useDeferredValue, useMemo, useRef, useState, useSyncExternalStore, type KeyboardEvent } from 'react';
import { useHydrated } from '../admin/use-hydrated.ts';
import { Spinner } from '../admin/AdminUi.tsx';
import { measureBody } from './body-stats.ts';

// Its own chunk: the editor library is fetched on the editor route, and only once the Visual tab is opened.
const VisualEditor = lazy(() => import('./VisualEditor.tsx'));

export type BodyView = 'visual' | 'html';

/** The view a writer last chose is kept in this browser. */
const VIEW_KEY = 'meridian.editor.bodyView';

const TABS: readonly { view: BodyView; label: string }[] = [
  { view: 'visual', label: 'Visual' },
  { view: 'html', label: 'HTML' },
];

function readStoredView(): BodyView | undefined {
  try {
    const stored = window.localStorage.getItem(VIEW_KEY);
    return stored === 'visual' || stored === 'html' ? stored : undefined;
  } catch {
    return undefined;
  }
}

function subscribeStorage(onChange: () => void): () => void {
  window.addEventListener('storage', onChange);
  return () => window.removeEventListener('storage', onChange);
}

type Props = { value: string; onChange: (html: string) => void };

export function BodyField({ value, onChange }: Props) {
  // The server renders the HTML view; the browser then opens the view kept in it, until a tab is chosen here.
  const stored = useSyncExternalStore(subscribeStorage, readStoredView, () => undefined);
  const [chosen, setChosen] = useState<BodyView | undefined>();
  const view = chosen ?? stored ?? 'html';
  const hydrated = useHydrated();
  const tabs = useRef<HTMLDivElement>(null);

  const choose = (next: BodyView) => {
    setChosen(next);
    try {
      window.localStorage.setItem(VIEW_KEY, next);
    } catch {
      // A browser that refuses storage simply opens the default view next time.
    }
  };

  const onTabKey = (event: KeyboardEvent<HTMLButtonElement>) => {
    if (event.key !== 'ArrowLeft' && event.key !== 'ArrowRight') return;
    event.preventDefault();
    const next = view === 'visual' ? 'html' : 'visual';
    choose(next);
    tabs.current?.querySelector<HTMLButtonElement>(`#body-tab-${next}`)?.focus();
  };

  const deferred = useDeferredValue(value);
  const stats = useMemo(() => (hydrated ? measureBody(deferred) : undefined), [hydrated, deferred]);

  return (
    <div className="adm-field ve-field">
      <div ref={tabs} className="ve-tabs" role="tablist" aria-label="Body view">
        {TABS.map((tab) => (
          <button
            key={tab.view}
            id={`body-tab-${tab.view}`}
            type="button"
            role="tab"
            className="ve-tab"
            aria-selected={view === tab.view}
            aria-controls={`body-panel-${tab.view}`}
            tabIndex={view === tab.view ? 0 : -1}
            onClick={() => choose(tab.view)}
            onKeyDown={onTabKey}
          >
            {tab.label}
          </button>
        ))}
      </div>
      <div id="body-panel-html" role="tabpanel" aria-labelledby="body-tab-html" hidden={view !== 'html'}>
        <label className="adm-field">
          <span>Article Body (HTML)</span>
          <textarea
            rows={12}
            className="adm-mono"
            value={value}
            onChange={(e) => onChange(e.target.value)}
            aria-describedby="body-hint"
            spellCheck={false}
          />
          <small id="body-hint" className="adm-muted">
            Use HTML tags such as &lt;p&gt;, &lt;h2&gt;, &lt;ul&gt;, &lt;blockquote&gt;.
          </small>
        </label>
      </div>
      <div id="body-panel-visual" role="tabpanel" aria-labelledby="body-tab-visual" hidden={view !== 'visual'}>
        <span id="visual-body-label" className="adm-sr-only">
          Article Body
        </span>
        {/* Mounted only while chosen: each opening loads the current HTML, and an unedited view writes nothing back. */}
        {view === 'visual' && (
          <Suspense fallback={<Spinner label="Loading the visual editor" />}>
            <VisualEditor html={value} onChange={onChange} labelledBy="visual-body-label" describedBy="body-stats" />
          </Suspense>
        )}
      </div>
      <p id="body-stats" className="adm-muted ve-stats" data-testid="body-stats">
        {stats ? `${stats.words.toLocaleString('en-US')} ${stats.words === 1 ? 'word' : 'words'} · ${stats.minutes} min read` : '\u00a0'}
      </p>
    </div>
  );
}
