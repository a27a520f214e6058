/** Offers the text a failed save left in this browser: restore it into the editor, or discard it. */
import { formatDateTime } from '../admin/admin-format.ts';
import type { KeptText } from './unsaved-text.ts';

type Props = { kept: KeptText; currentVersion: number | undefined; onRestore: () => void; onDiscard: () => void };

export function UnsavedTextBanner({ kept, currentVersion, onRestore, onDiscard }: Props) {
  const changedSince = kept.version !== undefined && currentVersion !== undefined && currentVersion !== kept.version;
  return (
    <section className="adm-card adm-conflict" role="alert" data-testid="editor-unsaved-text">
      <h2 className="adm-card-title">You have unsaved changes from an earlier visit</h2>
      <p>
        A save at <time dateTime={kept.keptAt}>{formatDateTime(kept.keptAt)}</time> could not be stored, so this browser kept your text. It
        is not saved yet.
        {changedSince &&
          ` The article was changed since (now version ${currentVersion}): restoring puts your text over that change when you save.`}
      </p>
      <div className="adm-actions">
        <button type="button" className="adm-btn adm-btn-primary" onClick={onRestore}>
          Restore my unsaved text
        </button>
        <button type="button" className="adm-btn adm-btn-ghost" onClick={onDiscard}>
          Discard it
        </button>
      </div>
    </section>
  );
}
