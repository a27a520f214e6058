/**
 * Audit tab (admins, issue 14): who published, unpublished, deleted, restored, changed a role, hid a comment or changed a source, newest
 * first.
 */
import { useState } from 'react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import type { AuditEntry } from '../../schemas/audit.ts';
import { formatDateTime } from './admin-format.ts';
import { Pagination } from './Pagination.tsx';
import { QueryFailure, Spinner } from './AdminUi.tsx';

const AUDIT_PAGE_SIZE = 25;

export function AuditTab() {
  const [page, setPage] = useState(1);
  const log = useQuery<{ items: AuditEntry[]; total: number }>({
    queryKey: ['/api/audit', { page, pageSize: AUDIT_PAGE_SIZE }],
    placeholderData: keepPreviousData,
  });
  const totalPages = log.data ? Math.ceil(log.data.total / AUDIT_PAGE_SIZE) : 0;

  return (
    <div className="adm-stack">
      {log.isPending ? (
        <Spinner label="Loading the audit log" />
      ) : log.isError ? (
        <QueryFailure what="the audit log" onRetry={() => void log.refetch()} />
      ) : log.data.items.length === 0 ? (
        <p className="adm-empty">Nothing recorded yet.</p>
      ) : (
        <ul className="adm-list">
          {log.data.items.map((entry) => (
            <li key={entry.id} className="adm-row" data-testid="audit-entry">
              <div className="adm-row-main">
                <span>
                  <strong>{entry.actor?.username ?? 'system'}</strong> {entry.action.replace('.', ': ')}{' '}
                  <span className="adm-break">{entry.target.label ?? entry.target.id}</span>
                  {entry.detail && <span className="adm-muted"> ({entry.detail})</span>}
                </span>
                <div className="adm-meta">
                  <time dateTime={entry.at}>{formatDateTime(entry.at)}</time>
                </div>
              </div>
            </li>
          ))}
        </ul>
      )}
      <Pagination page={page} totalPages={totalPages} onChange={setPage} label="Audit log pages" />
    </div>
  );
}
