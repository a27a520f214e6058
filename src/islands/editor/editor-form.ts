/** The editor's form state and the request body it becomes (docs/product.md, Interface rules: forms). */
import type { z } from 'zod';
import type { Article, ArticleStatus, articleInputSchema } from '../../schemas/article.ts';
import type { Section } from '../../schemas/common.ts';
import type { Access } from '../../schemas/member.ts';

export type EditorForm = {
  title: string;
  dek: string;
  authorName: string;
  bodyHtml: string;
  heroImage: string;
  section: Section;
  tags: string[];
  isBreaking: boolean;
  isEditorsPick: boolean;
  /** Who may read the whole body (issue 48). */
  access: Access;
  /** Publication date (yyyy-mm-dd) and time (HH:mm) from the pickers, in the editor's time zone. */
  scheduleDate: string;
  scheduleTime: string;
};

export const DEFAULT_SCHEDULE_TIME = '09:00';

export const EMPTY_FORM: EditorForm = {
  title: '',
  dek: '',
  authorName: '',
  bodyHtml: '',
  heroImage: '',
  section: 'home',
  tags: [],
  isBreaking: false,
  isEditorsPick: false,
  access: 'public',
  scheduleDate: '',
  scheduleTime: DEFAULT_SCHEDULE_TIME,
};

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** The form of a stored article (its scheduled date shown in local time). */
export function formFromArticle(article: Article): EditorForm {
  const scheduled = article.scheduledFor ? new Date(article.scheduledFor) : undefined;
  const hasDate = scheduled !== undefined && !Number.isNaN(scheduled.getTime());
  return {
    title: article.title,
    dek: article.dek ?? '',
    authorName: article.authorName,
    bodyHtml: article.bodyHtml,
    heroImage: article.heroImage ?? '',
    section: article.section,
    tags: article.tags,
    isBreaking: article.isBreaking,
    isEditorsPick: article.isEditorsPick,
    access: article.access ?? 'public',
    scheduleDate: hasDate ? `${scheduled.getFullYear()}-${pad(scheduled.getMonth() + 1)}-${pad(scheduled.getDate())}` : '',
    scheduleTime: hasDate ? `${pad(scheduled.getHours())}:${pad(scheduled.getMinutes())}` : DEFAULT_SCHEDULE_TIME,
  };
}

/** The chosen publication moment, or undefined when the date or the time is missing or invalid. */
export function scheduledDateOf(form: Pick<EditorForm, 'scheduleDate' | 'scheduleTime'>): Date | undefined {
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(form.scheduleDate);
  const time = /^(\d{2}):(\d{2})$/.exec(form.scheduleTime);
  if (!day || !time) return undefined;
  const date = new Date(Number(day[1]), Number(day[2]) - 1, Number(day[3]), Number(time[1]), Number(time[2]));
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** Adds a tag: trimmed, empty ignored, duplicates ignored. */
export function addTag(tags: string[], raw: string): string[] {
  const tag = raw.trim();
  if (!tag || tags.includes(tag)) return tags;
  return [...tags, tag];
}

export type ArticleBody = z.input<typeof articleInputSchema>;

/**
 * The body of POST /api/articles (create) or PUT /api/articles/{id} (update). Empty dek, body and
 * hero image are omitted on create; on update they are sent empty, because PUT merges and an
 * omitted field would keep its old value (removing a hero image must remove it).
 */
export function buildArticleBody(form: EditorForm, status: ArticleStatus, mode: 'create' | 'update'): ArticleBody {
  const body: ArticleBody = {
    title: form.title.trim(),
    section: form.section,
    tags: form.tags,
    authorName: form.authorName.trim(),
    isBreaking: form.isBreaking,
    isEditorsPick: form.isEditorsPick,
    access: form.access,
    status,
  };
  const dek = form.dek.trim();
  const bodyHtml = form.bodyHtml.trim() ? form.bodyHtml : '';
  if (dek) body.dek = dek;
  else if (mode === 'update') body.dek = '';
  if (bodyHtml) body.bodyHtml = bodyHtml;
  else if (mode === 'update') body.bodyHtml = '';
  if (form.heroImage) body.heroImage = form.heroImage;
  else if (mode === 'update') body.heroImage = '';
  // docs/product.md, Interface rules: forms: scheduledFor only with status scheduled and a chosen date.
  const when = scheduledDateOf(form);
  if (status === 'scheduled' && when) body.scheduledFor = when.toISOString();
  return body;
}
