/** Shown when a save met a newer version (409): who changed the article and when, with Reload and Compare. */
import { useState } from 'react';
import { formatDateTime } from '../admin/admin-format.ts';
import type { EditConflict } from './editor-conflict.ts';
import { DiffView } from './DiffView.tsx';

type Props = { conflict: EditConflict; mine: string; onReload: () => void; onDismiss: () => void };

export function ConflictBanner({ conflict, mine, onReload, onDismiss }: Props) {
  const [comparing, setComparing] = useState(false);
  return (
    <section className="adm-card adm-conflict" role="alert" data-testid="editor-conflict">
      <h2 className="adm-card-title">This article was changed while you were editing</h2>
      <p>
        {conflict.changedBy ? <strong>{conflict.changedBy}</strong> : 'Someone'} saved it at{' '}
        <time dateTime={conflict.changedAt}>{formatDateTime(conflict.changedAt)}</time> (version {conflict.current.version}). Your changes
        are not saved.
      </p>
      <div className="adm-actions">
        <button type="button" className="adm-btn adm-btn-primary" onClick={onReload}>
          Reload their version
        </button>
        <button type="button" className="adm-btn adm-btn-outline" aria-expanded={comparing} onClick={() => setComparing((v) => !v)}>
          {comparing ? 'Hide comparison' : 'Compare'}
        </button>
        <button type="button" className="adm-btn adm-btn-ghost" onClick={onDismiss}>
          Keep my text
        </button>
      </div>
      {comparing && <DiffView before={conflict.current.bodyHtml} after={mine} beforeLabel="their version" afterLabel="your text" />}
    </section>
  );
}
