/** The visual editor's link dialog: one address, checked by the link rule before it is applied. */
import { useState } from 'react';
import { EditorDialog } from './EditorDialog.tsx';
import { checkLinkUrl } from './link-url.ts';

type Props = { initial: string; hasLink: boolean; onApply: (href: string) => void; onRemove: () => void; onClose: () => void };

export function LinkDialog({ initial, hasLink, onApply, onRemove, onClose }: Props) {
  const [value, setValue] = useState(initial);
  const [error, setError] = useState<string | undefined>();
  return (
    <EditorDialog
      title={hasLink ? 'Edit link' : 'Insert link'}
      testId="link-dialog"
      onClose={onClose}
      onSubmit={() => {
        const checked = checkLinkUrl(value);
        if (checked.ok) onApply(checked.href);
        else setError(checked.reason);
      }}
    >
      <label className="adm-field">
        <span>Link address</span>
        <input
          type="text"
          inputMode="url"
          value={value}
          onChange={(event) => {
            setValue(event.target.value);
            setError(undefined);
          }}
          placeholder="https://example.com/story"
          aria-invalid={error ? true : undefined}
          aria-describedby="link-dialog-hint"
        />
        <small id="link-dialog-hint" className={error ? 'adm-error-text' : 'adm-muted'} role={error ? 'alert' : undefined}>
          {error ?? 'A web address, a mailto: link or a path on this site such as /section/world.'}
        </small>
      </label>
      <div className="adm-actions">
        <button type="submit" className="adm-btn adm-btn-primary">
          Apply
        </button>
        {hasLink && (
          <button type="button" className="adm-btn adm-btn-outline" onClick={onRemove}>
            Remove link
          </button>
        )}
        <button type="button" className="adm-btn adm-btn-outline" onClick={onClose}>
          Cancel
        </button>
      </div>
    </EditorDialog>
  );
}
