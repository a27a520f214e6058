/** Page numbers with Previous/Next for the admin lists; hidden when there is one page or fewer. */
import { listPaginationItems } from '../../lib/pagination.ts';

type Props = {
  page: number;
  totalPages: number;
  onChange: (page: number) => void;
  label: string;
};

export function Pagination({ page, totalPages, onChange, label }: Props) {
  if (totalPages <= 1) return null;
  return (
    <nav className="adm-pagination" aria-label={label}>
      <button type="button" className="adm-btn adm-btn-outline" disabled={page <= 1} onClick={() => onChange(page - 1)}>
        Previous
      </button>
      <ul>
        {listPaginationItems(page, totalPages).map((item) =>
          item.kind === 'ellipsis' ? (
            <li key={item.key} aria-hidden="true" className="adm-pagination-gap">
              …
            </li>
          ) : (
            <li key={item.page}>
              <button
                type="button"
                className={`adm-btn ${item.page === page ? 'adm-btn-primary' : 'adm-btn-ghost'}`}
                aria-current={item.page === page ? 'page' : undefined}
                aria-label={`Page ${item.page}`}
                onClick={() => onChange(item.page)}
              >
                {item.page}
              </button>
            </li>
          ),
        )}
      </ul>
      <button type="button" className="adm-btn adm-btn-outline" disabled={page >= totalPages} onClick={() => onChange(page + 1)}>
        Next
      </button>
    </nav>
  );
}
