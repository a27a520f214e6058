/**
 * Editor text a save could not store (the server was unavailable, the network dropped), kept in
 * this browser's localStorage per user and article until a save succeeds or the editor discards it,
 * and offered again when the editor is opened next.
 */
import { EMPTY_FORM, type EditorForm } from './editor-form.ts';

export type KeptText = {
  form: EditorForm;
  /** The version the text was edited from (undefined: a new article). */
  version: number | undefined;
  /** When it was kept (ISO). */
  keptAt: string;
  /** Which opening of the editor kept it: one keeps its own text quietly, a later one offers it. */
  by: string;
};

const PREFIX = 'meridian-unsaved-article:';

/** One entry per user and article (`new` for an article not created yet), so another account on this browser is never offered it. */
export function keptTextKey(userId: string | undefined, articleId: string | undefined): string {
  return `${PREFIX}${userId ?? 'anyone'}:${articleId ?? 'new'}`;
}

export function keepText(key: string, by: string, form: EditorForm, version: number | undefined, now = new Date()): void {
  try {
    localStorage.setItem(key, JSON.stringify({ form, version, keptAt: now.toISOString(), by } satisfies KeptText));
  } catch {
    // Storage disabled or full: the text stays in the open editor only, as before.
  }
}

/** What localStorage holds under `key` (null: nothing, or no storage), as React's useSyncExternalStore reads it. */
export function readKeptRaw(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

/** Calls `changed` when another tab keeps or forgets text (this tab's own writes need no telling). */
export function subscribeKeptText(changed: () => void): () => void {
  window.addEventListener('storage', changed);
  return () => window.removeEventListener('storage', changed);
}

/** The kept text in `raw` (readKeptRaw), or undefined when there is none or it is not ours to read. */
export function parseKeptText(raw: string | null): KeptText | undefined {
  if (!raw) return undefined;
  try {
    const data = JSON.parse(raw) as Partial<KeptText>;
    const form = data.form as Partial<EditorForm> | undefined;
    if (!form || typeof form.title !== 'string' || typeof form.bodyHtml !== 'string' || typeof data.keptAt !== 'string') return undefined;
    return {
      form: { ...EMPTY_FORM, ...form, tags: Array.isArray(form.tags) ? form.tags.filter((t) => typeof t === 'string') : [] },
      version: typeof data.version === 'number' ? data.version : undefined,
      keptAt: data.keptAt,
      by: typeof data.by === 'string' ? data.by : '',
    };
  } catch {
    return undefined;
  }
}

export function forgetKeptText(key: string): void {
  try {
    localStorage.removeItem(key);
  } catch {
    // Nothing was kept.
  }
}

/** Whether two forms hold the same text and settings (the kept text is then saved already). */
export function sameForm(a: EditorForm, b: EditorForm): boolean {
  return JSON.stringify({ ...EMPTY_FORM, ...a }) === JSON.stringify({ ...EMPTY_FORM, ...b });
}
