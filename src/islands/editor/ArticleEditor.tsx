/**
 * The article editor island: create (no id) or update (with id), save as draft, publish or schedule.
 * Every save carries the version the editor holds (issue 14): a 409 shows who changed the article,
 * with Reload and Compare; drafts autosave while typing; History restores an earlier revision. Text
 * a save could not store is kept in this browser and offered again on the next load (issue 31).
 */
import { useCallback, useEffect, useMemo, useRef, useState, useSyncExternalStore } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ApiRequestError } from '../../lib/api-client.ts';
import { withQueryClient } from '../../lib/query-client.tsx';
import type { Article, ArticleStatus } from '../../schemas/article.ts';
import { toast } from '../toast/toast-store.ts';
import { adminKeys, invalidateArticles } from '../admin/admin-queries.ts';
import { formatLongDate } from '../admin/admin-format.ts';
import { Spinner } from '../admin/AdminUi.tsx';
import { useHydrated } from '../admin/use-hydrated.ts';
import { buildArticleBody, EMPTY_FORM, formFromArticle, scheduledDateOf, type ArticleBody, type EditorForm } from './editor-form.ts';
import { BodyPreview } from './BodyPreview.tsx';
import { BodyField } from './BodyField.tsx';
import { HeroImageField } from './HeroImageField.tsx';
import { SchedulePicker } from './SchedulePicker.tsx';
import { SettingsCard } from './SettingsCard.tsx';
import { usePermissions } from '../auth/use-permissions.ts';
import { useCurrentUser } from '../auth/use-current-user.ts';
import type { PublicUser } from '../../schemas/auth.ts';
import { ConflictBanner } from './ConflictBanner.tsx';
import { CorrectionsField } from './CorrectionsField.tsx';
import { RevisionHistory } from './RevisionHistory.tsx';
import { LivePanel } from './LivePanel.tsx';
import { ArticleViewsPanel } from '../admin/charts/ArticleViews.tsx';
import { conflictOf, type EditConflict } from './editor-conflict.ts';
import { UnsavedTextBanner } from './UnsavedTextBanner.tsx';
import { forgetKeptText, keepText, keptTextKey, parseKeptText, readKeptRaw, sameForm, subscribeKeptText } from './unsaved-text.ts';

/** Drafts autosave this long after the last keystroke (the server also folds autosaves into one revision a minute). */
export const AUTOSAVE_DELAY_MS = 2500;

type Props = { articleId?: string | undefined; currentUser?: PublicUser | undefined };

/**
 * The article a 409 carries when it already holds exactly what this save sent: an earlier attempt was
 * stored though its answer was lost (a 503 or a dropped connection), so the retry is done, not a conflict.
 */
function alreadySaved(error: unknown, sent: string, status?: ArticleStatus): Article | undefined {
  const found = conflictOf(error);
  if (!found) return undefined;
  const same = sameForm(formFromArticle(found.current), JSON.parse(sent) as EditorForm);
  return same && (status === undefined || found.current.status === status) ? found.current : undefined;
}

/**
 * Why a save could not be stored, when the server was unavailable (a 5xx) or out of reach (no answer):
 * then the text is kept in this browser. Undefined for a refusal (a 4xx), which the editor shows as before.
 */
function unavailableReason(error: unknown): string | undefined {
  if (!(error instanceof ApiRequestError)) return 'The server could not be reached.';
  if (error.status < 500) return undefined;
  return error.status === 503 && error.serverMessage ? error.serverMessage : 'The server could not store the change.';
}

const KEPT_NOTE = 'Your text is kept in this browser until it is saved.';

/** The status line under the title (docs/product.md, Interface rules: forms). */
function describeStatus(status: ArticleStatus, scheduledFor: string | undefined): string {
  if (status === 'published') return 'Article is live';
  if (status === 'scheduled' && scheduledFor) return `Scheduled for ${formatLongDate(scheduledFor)}`;
  if (status === 'archived') return 'Archived article';
  return 'Draft article';
}

function ArticleEditor({ articleId: initialId, currentUser }: Props) {
  useCurrentUser(currentUser);
  const client = useQueryClient();
  const [articleId, setArticleId] = useState(initialId);
  const [form, setForm] = useState<EditorForm>(EMPTY_FORM);
  const [saved, setSaved] = useState<Pick<Article, 'status' | 'scheduledFor' | 'slug'> | undefined>();
  const initialized = useRef(false);
  const hydrated = useHydrated();
  const permissions = usePermissions();
  // Issue 14: the version this editor started from, the article as last saved, and a pending conflict.
  const [version, setVersion] = useState<number | undefined>();
  const [current, setCurrent] = useState<Article | undefined>();
  const [conflict, setConflict] = useState<EditConflict | undefined>();
  const [autosavedAt, setAutosavedAt] = useState<string | undefined>();
  /** The form as last saved, to know whether there is anything to autosave. */
  const savedForm = useRef<string>(JSON.stringify(EMPTY_FORM));
  // Issue 31: text a failed save left in this browser. This opening's own writes carry its id; text
  // another opening kept (before a reload) is offered once the article is loaded.
  const keptKey = keptTextKey(currentUser?.id, articleId);
  const [opening] = useState(() => Math.random().toString(36).slice(2));
  const [autosaveFailed, setAutosaveFailed] = useState(false);
  /** The kept text the editor answered (restored or discarded): no longer offered. */
  const [answered, setAnswered] = useState<string | undefined>();
  /** Whether the editor's text is kept in this browser (a save failed, or kept text was restored) until a save stores it. */
  const keeping = useRef(false);

  /** Takes a saved article as the editor's new base (after a save, a reload or a restore). */
  const adopt = useCallback(
    (article: Article, options: { replaceForm: boolean }) => {
      setVersion(article.version);
      setCurrent(article);
      setSaved({ status: article.status, scheduledFor: article.scheduledFor, slug: article.slug });
      client.setQueryData(adminKeys.article(article.id), article);
      if (options.replaceForm) {
        const next = formFromArticle(article);
        setForm(next);
        savedForm.current = JSON.stringify(next);
      }
    },
    [client],
  );

  const existing = useQuery<Article>({ queryKey: adminKeys.article(initialId ?? ''), enabled: initialId !== undefined });

  const keptRaw = useSyncExternalStore(
    subscribeKeptText,
    () => readKeptRaw(keptKey),
    () => null,
  );
  const kept = useMemo(() => parseKeptText(keptRaw), [keptRaw]);
  /** Text a save stored though its answer was lost: the article holds it already, so there is nothing to offer. */
  const keptIsStored = kept !== undefined && existing.data !== undefined && sameForm(kept.form, formFromArticle(existing.data));
  const offered =
    kept && kept.by !== opening && kept.keptAt !== answered && !keptIsStored && (initialId === undefined || existing.data)
      ? kept
      : undefined;
  useEffect(() => {
    if (keptIsStored && kept?.by !== opening) forgetKeptText(keptKey);
  }, [keptIsStored, kept, opening, keptKey]);

  // While kept, the text follows every change, so what a reload offers is what was typed last.
  useEffect(() => {
    if (keeping.current) keepText(keptKey, opening, form, version);
  }, [form, keptKey, opening, version]);

  /** A save failed (not a conflict): the text stays in this browser from now until a save stores it. */
  const keepAfterFailure = () => {
    keeping.current = true;
    keepText(keptKey, opening, form, version);
  };

  /** A save stored `sent`: the kept copy goes once the editor holds nothing newer. */
  const forgetIfSaved = (sent: string, key: string) => {
    if (keeping.current && sameForm(form, JSON.parse(sent) as EditorForm)) {
      keeping.current = false;
      forgetKeptText(key);
    }
  };

  // Fill the form once from the loaded article; later refetches must not overwrite the editor's edits.
  useEffect(() => {
    if (existing.data && !initialized.current) {
      initialized.current = true;
      adopt(existing.data, { replaceForm: true });
    }
  }, [existing.data, adopt]);

  const save = useMutation({
    mutationFn: ({ id, body }: { id: string | undefined; body: ArticleBody; sent: string }) =>
      id ? api.put<Article>(`/api/articles/${id}`, { ...body, version }) : api.post<Article>('/api/articles', body),
    onSuccess: (article, { id, sent }) => onSaved(article, id, sent),
    onError: (error, { id, body, sent }) => {
      const stored = alreadySaved(error, sent, body.status);
      if (stored) return onSaved(stored, id, sent);
      const conflict = conflictOf(error);
      if (conflict) return setConflict(conflict);
      const reason = unavailableReason(error);
      if (reason) {
        keepAfterFailure();
        return toast({ title: 'Not saved', description: `${reason} ${KEPT_NOTE}`, variant: 'destructive' });
      }
      toast({
        title: 'Error',
        description: id ? 'Failed to update article. Please try again.' : 'Failed to create article. Please try again.',
        variant: 'destructive',
      });
    },
    onSettled: () => invalidateArticles(client),
  });

  function onSaved(article: Article, id: string | undefined, sent: string) {
    adopt(article, { replaceForm: false });
    savedForm.current = sent;
    setAutosaveFailed(false);
    // A new article's text was kept under `new`: the create stored it.
    forgetIfSaved(sent, id ? keptKey : keptTextKey(currentUser?.id, undefined));
    if (id) {
      toast({ title: 'Article updated', description: 'Your article has been updated successfully.' });
    } else {
      setArticleId(article.id);
      // docs/decisions.md, Routes and pages: after creating, the editor lives at /admin/editor/{id}.
      window.history.replaceState(null, '', `/admin/editor/${article.id}`);
      document.title = document.title.replace(/^Create New Article/, 'Edit Article');
      toast({ title: 'Article created', description: 'Your article has been created successfully.' });
    }
  }

  const update = <K extends keyof EditorForm>(key: K, value: EditorForm[K]) => setForm((current) => ({ ...current, [key]: value }));

  const submit = (status: ArticleStatus) => {
    if (status !== 'draft' && !form.title.trim()) {
      toast({ title: 'Title required', description: 'Please enter a title for the article.', variant: 'destructive' });
      return;
    }
    if (status === 'scheduled' && !scheduledDateOf(form)) {
      toast({ title: 'Date required', description: 'Please select a publish date.', variant: 'destructive' });
      return;
    }
    save.mutate({ id: articleId, body: buildArticleBody(form, status, articleId ? 'update' : 'create'), sent: JSON.stringify(form) });
  };

  // Drafts autosave a few seconds after the last change: content only (never status), with the version.
  const autosave = useMutation({
    mutationFn: ({ body }: { body: ArticleBody; sent: string }) => {
      const { status: _status, scheduledFor: _when, ...content } = body;
      return api.put<Article>(`/api/articles/${articleId}`, { ...content, autosave: true, version });
    },
    onSuccess: (article, { sent }) => onAutosaved(article, sent),
    onError: (error, { sent }) => {
      const stored = alreadySaved(error, sent);
      if (stored) return onAutosaved(stored, sent);
      const found = conflictOf(error);
      if (found) return setConflict(found);
      if (unavailableReason(error)) {
        keepAfterFailure();
        setAutosaveFailed(true);
      }
    },
  });

  function onAutosaved(article: Article, sent: string) {
    adopt(article, { replaceForm: false });
    savedForm.current = sent;
    setAutosavedAt(article.updatedAt);
    setAutosaveFailed(false);
    forgetIfSaved(sent, keptKey);
  }
  // TanStack Query keeps `mutate` stable across renders, so the timer restarts only when the form or the state changes.
  const { mutate: runAutosave, isPending: autosavePending } = autosave;
  const canAutosave = articleId !== undefined && saved?.status === 'draft' && conflict === undefined && version !== undefined;
  useEffect(() => {
    if (!canAutosave || save.isPending || autosavePending) return;
    const sent = JSON.stringify(form);
    if (sent === savedForm.current || !form.title.trim()) return;
    const timer = window.setTimeout(() => runAutosave({ body: buildArticleBody(form, 'draft', 'update'), sent }), AUTOSAVE_DELAY_MS);
    return () => window.clearTimeout(timer);
  }, [form, canAutosave, save.isPending, autosavePending, runAutosave]);

  const failed = (error: unknown) => {
    const found = conflictOf(error);
    if (found) setConflict(found);
    else toast({ title: 'Error', description: 'The change could not be saved. Please try again.', variant: 'destructive' });
  };

  if (initialId !== undefined && existing.isPending) {
    return (
      <div className="adm" data-hydrated={hydrated}>
        <Spinner label="Loading article" />
      </div>
    );
  }
  // Only a first load that failed: a refetch failing (the server unavailable after a save) keeps the editor and its text.
  if (initialId !== undefined && existing.isError && existing.data === undefined) {
    const missing = existing.error instanceof ApiRequestError && existing.error.status === 404;
    return (
      <div className="adm" data-hydrated={hydrated}>
        <div className="adm-card adm-empty" role="alert">
          <h1 className="adm-title">{missing ? 'Article Not Found' : 'Could not load the article'}</h1>
          <p>{missing ? "The article you're looking for doesn't exist." : 'Please try again.'}</p>
          <a className="adm-btn adm-btn-outline" href="/admin?tab=articles">
            Back to Article Manager
          </a>
        </div>
      </div>
    );
  }

  const status = saved?.status ?? 'draft';
  // An autosave in flight holds the version too: a manual save waits for it rather than conflict with it.
  const saving = save.isPending || autosave.isPending;
  const hasDate = form.scheduleDate !== '';
  // A new article will be the user's own; the server checks again on save.
  const target = { createdBy: existing.data ? existing.data.createdBy : permissions.userId, status };
  const mayPublish = permissions.can('article.publish', target);
  const maySchedule = permissions.can('article.schedule', target);

  return (
    <div className="adm adm-editor" data-hydrated={hydrated}>
      <header className="adm-header">
        <div>
          <a className="adm-back" href="/admin">
            ← Back to dashboard
          </a>
          <h1 className="adm-title">{articleId ? 'Edit Article' : 'Create New Article'}</h1>
          <p className="adm-muted" data-testid="editor-status">
            {describeStatus(status, saved?.scheduledFor)}
            {autosaveFailed ? (
              <span data-testid="autosave-status">{' · '}Not saved: your text is kept in this browser</span>
            ) : (
              autosavedAt &&
              status === 'draft' && (
                <span data-testid="autosave-status">
                  {' · '}Saved automatically at {new Date(autosavedAt).toLocaleTimeString()}
                </span>
              )
            )}
            {status === 'published' && saved?.slug && (
              <>
                {' · '}
                <a href={`/article/${saved.slug}`} target="_blank" rel="noopener">
                  View article
                </a>
              </>
            )}
          </p>
        </div>
        <div className="adm-actions adm-editor-actions">
          <button type="button" className="adm-btn adm-btn-outline" disabled={saving} onClick={() => submit('draft')}>
            Save Draft
          </button>
          {mayPublish && (
            <button type="button" className="adm-btn adm-btn-primary" disabled={saving} onClick={() => submit('published')}>
              {status === 'published' ? 'Update' : 'Publish Now'}
            </button>
          )}
          {maySchedule && (
            <button type="button" className="adm-btn adm-btn-outline" disabled={saving || !hasDate} onClick={() => submit('scheduled')}>
              Schedule for Later
            </button>
          )}
        </div>
      </header>

      {offered && (
        <UnsavedTextBanner
          kept={offered}
          currentVersion={version}
          onRestore={() => {
            keeping.current = true;
            setAnswered(offered.keptAt);
            setForm(offered.form);
          }}
          onDiscard={() => {
            setAnswered(offered.keptAt);
            forgetKeptText(keptKey);
          }}
        />
      )}

      {conflict && (
        <ConflictBanner
          conflict={conflict}
          mine={form.bodyHtml}
          onReload={() => {
            adopt(conflict.current, { replaceForm: true });
            setConflict(undefined);
          }}
          onDismiss={() => {
            // Keeping my text: the next save deliberately replaces their version, which the editor has now seen.
            setVersion(conflict.current.version);
            setCurrent(conflict.current);
            setConflict(undefined);
          }}
        />
      )}

      <div className="adm-editor-grid" aria-busy={saving}>
        <div className="adm-stack">
          <section className="adm-card adm-form-stack" aria-labelledby="content-heading">
            <h2 id="content-heading" className="adm-card-title">
              Article Content
            </h2>
            <label className="adm-field">
              <span>
                Title <span aria-hidden="true">*</span>
              </span>
              <input
                type="text"
                value={form.title}
                onChange={(e) => update('title', e.target.value)}
                required
                aria-required="true"
                placeholder="Headline"
              />
            </label>
            <label className="adm-field">
              <span>Deck (Summary)</span>
              <textarea
                rows={2}
                value={form.dek}
                onChange={(e) => update('dek', e.target.value)}
                placeholder="One or two sentences under the headline"
              />
            </label>
            <label className="adm-field">
              <span>Author Name</span>
              <input type="text" value={form.authorName} onChange={(e) => update('authorName', e.target.value)} autoComplete="name" />
            </label>
            <div className="adm-body-grid">
              <BodyField value={form.bodyHtml} onChange={(html) => update('bodyHtml', html)} />
              <BodyPreview html={form.bodyHtml} />
            </div>
          </section>

          <HeroImageField heroImage={form.heroImage} onChange={(path) => update('heroImage', path)} disabled={saving} />

          {articleId && existing.data && <LivePanel articleId={articleId} published={status === 'published'} mayPublish={mayPublish} />}
        </div>

        <div className="adm-stack">
          <SettingsCard form={form} update={update} />

          {maySchedule && (
            <SchedulePicker
              date={form.scheduleDate}
              time={form.scheduleTime}
              onChange={(value) => setForm((current) => ({ ...current, ...value }))}
            />
          )}

          {articleId && version !== undefined && status === 'published' && mayPublish && (
            <CorrectionsField
              articleId={articleId}
              version={version}
              corrections={current?.corrections ?? []}
              onAdded={(correction) => {
                // The correction was saved over exactly our version (If-Match): the next one is ours too.
                setVersion(version + 1);
                setCurrent((c) => (c ? { ...c, version: version + 1, corrections: [...(c.corrections ?? []), correction] } : c));
              }}
              onFailed={failed}
            />
          )}

          {articleId && existing.data?.publishedAt && permissions.can('analytics.read', existing.data) && (
            <section className="adm-card adm-form-stack" aria-labelledby="views-heading">
              <h2 id="views-heading" className="adm-card-title">
                Readers
              </h2>
              <ArticleViewsPanel articleId={articleId} />
            </section>
          )}

          {articleId && version !== undefined && (
            <RevisionHistory
              articleId={articleId}
              version={version}
              currentBody={current?.bodyHtml ?? form.bodyHtml}
              onRestored={(article) => {
                adopt(article, { replaceForm: true });
                toast({ title: 'Revision restored', description: 'The article now has the restored text, as a new revision.' });
              }}
              onRestoreFailed={failed}
            />
          )}
        </div>
      </div>
    </div>
  );
}

export default withQueryClient(ArticleEditor);
