/** One article in the Article Manager: details, counters, views sparkline and chart, status action, vote adjustments, edit and delete. */
import { useState, type FormEvent } from 'react';
import type { Article, VoteKind } from '../../schemas/article.ts';
import { formatDateTime, parseVoteAdjustment } from './admin-format.ts';
import { StatusBadge } from './AdminUi.tsx';
import type { useArticleActions } from './use-article-actions.ts';
import { usePermissions } from '../auth/use-permissions.ts';
import { ArticleFiguresLine } from './charts/ArticleViews.tsx';

type Props = {
  article: Article;
  actions: ReturnType<typeof useArticleActions>;
  /** Views per day of the last `sparkDays` days, when the role may see this article's figures. */
  spark?: number[];
  sparkDays: number;
};

export function ManagerArticleCard({ article, actions, spark, sparkDays }: Props) {
  const { setStatus, adjust, remove, confirmAndDelete } = actions;
  // The role decides which controls exist (issue 14); the server checks every call again.
  const { can } = usePermissions();
  const busy = (setStatus.isPending && setStatus.variables?.id === article.id) || (remove.isPending && remove.variables === article.id);

  return (
    <li className="adm-card adm-article-card" data-testid="manager-article" data-article-id={article.id}>
      <div className="adm-meta">
        <StatusBadge status={article.status} />
        <span>{article.section}</span>
        {article.isBreaking && <span className="adm-badge adm-badge-breaking">Breaking</span>}
        {article.isEditorsPick && <span className="adm-badge">Editor's Pick</span>}
      </div>
      <h2 className="adm-article-title">
        <a href={`/admin/editor/${article.id}`}>{article.title}</a>
      </h2>
      <dl className="adm-facts">
        {article.sourceLabel && (
          <div>
            <dt>Source</dt>
            <dd>{article.sourceLabel}</dd>
          </div>
        )}
        {article.authorName && (
          <div>
            <dt>Author</dt>
            <dd>{article.authorName}</dd>
          </div>
        )}
        <div>
          <dt>{article.status === 'scheduled' ? 'Scheduled' : article.publishedAt ? 'Published' : 'Updated'}</dt>
          <dd>{formatDateTime(article.status === 'scheduled' ? article.scheduledFor : (article.publishedAt ?? article.updatedAt))}</dd>
        </div>
        <div>
          <dt>Likes</dt>
          <dd data-testid="likes">{article.likes}</dd>
        </div>
        <div>
          <dt>Dislikes</dt>
          <dd data-testid="dislikes">{article.dislikes}</dd>
        </div>
        <div>
          <dt>Views</dt>
          <dd>{article.views}</dd>
        </div>
      </dl>

      {article.publishedAt && can('analytics.read', article) && (
        <ArticleFiguresLine articleId={article.id} title={article.title} spark={spark} days={sparkDays} />
      )}

      {can('votes.adjust') && (
        <div className="adm-adjust">
          <AdjustVotes article={article} kind="like" onAdjust={(amount) => adjust.mutate({ id: article.id, kind: 'like', amount })} />
          <AdjustVotes article={article} kind="dislike" onAdjust={(amount) => adjust.mutate({ id: article.id, kind: 'dislike', amount })} />
        </div>
      )}

      <div className="adm-actions">
        {article.status === 'published' && can('article.publish', article) && (
          <button
            type="button"
            className="adm-btn adm-btn-outline adm-btn-sm"
            disabled={busy}
            onClick={() => setStatus.mutate({ id: article.id, status: 'archived' })}
          >
            Unpublish
          </button>
        )}
        {article.status === 'archived' && can('article.publish', article) && (
          <button
            type="button"
            className="adm-btn adm-btn-outline adm-btn-sm"
            disabled={busy}
            onClick={() => setStatus.mutate({ id: article.id, status: 'published' })}
          >
            Republish
          </button>
        )}
        {can('article.edit', article) && (
          <a className="adm-btn adm-btn-outline adm-btn-sm" href={`/admin/editor/${article.id}`}>
            Edit
          </a>
        )}
        {can('article.delete', article) && (
          <button type="button" className="adm-btn adm-btn-danger adm-btn-sm" disabled={busy} onClick={() => confirmAndDelete(article)}>
            Delete
          </button>
        )}
      </div>
    </li>
  );
}

function AdjustVotes({ article, kind, onAdjust }: { article: Article; kind: VoteKind; onAdjust: (amount: number) => void }) {
  const [value, setValue] = useState('');
  const label = kind === 'like' ? 'likes' : 'dislikes';
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const amount = parseVoteAdjustment(value);
    // docs/product.md, Interface rules: forms: not an integer, zero or NaN means nothing is sent.
    if (amount === undefined) return;
    onAdjust(amount);
    setValue('');
  };
  return (
    <form className="adm-adjust-form" onSubmit={submit} aria-label={`Adjust ${label} of ${article.title}`}>
      <input
        type="number"
        step={1}
        inputMode="numeric"
        value={value}
        onChange={(event) => setValue(event.target.value)}
        placeholder={`± ${label}`}
        aria-label={`Adjust ${label}`}
      />
      <button type="submit" className="adm-btn adm-btn-outline adm-btn-sm">
        Adjust {label}
      </button>
    </form>
  );
}
