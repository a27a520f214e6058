/** One article in the Overview's recent list: title, status, date, edit and delete. */
import type { Article } from '../../schemas/article.ts';
import { formatDateTime } from './admin-format.ts';
import { StatusBadge } from './AdminUi.tsx';
import { usePermissions } from '../auth/use-permissions.ts';

type Props = {
  article: Article;
  deleting: boolean;
  onDelete: (article: Article) => void;
};

export function ArticleRow({ article, deleting, onDelete }: Props) {
  const { can } = usePermissions();
  return (
    <li className="adm-row" data-testid="recent-article">
      <div className="adm-row-main">
        <a className="adm-row-title" href={`/admin/editor/${article.id}`}>
          {article.title}
        </a>
        <div className="adm-meta">
          <StatusBadge status={article.status} />
          <span>{article.section}</span>
          <span>{formatDateTime(article.publishedAt ?? article.updatedAt)}</span>
        </div>
      </div>
      <div className="adm-actions">
        {can('article.edit', article) && (
          <a className="adm-btn adm-btn-outline adm-btn-sm" href={`/admin/editor/${article.id}`} aria-label={`Edit ${article.title}`}>
            Edit
          </a>
        )}
        {can('article.delete', article) && (
          <button
            type="button"
            className="adm-btn adm-btn-danger adm-btn-sm"
            disabled={deleting}
            aria-label={`Delete ${article.title}`}
            onClick={() => onDelete(article)}
          >
            Delete
          </button>
        )}
      </div>
    </li>
  );
}
