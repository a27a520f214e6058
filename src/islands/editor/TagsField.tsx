/** Tags input: Add button or Enter adds a trimmed, non-empty, new tag; chips remove it. */
import { useState, type KeyboardEvent } from 'react';
import { addTag } from './editor-form.ts';

type Props = { tags: string[]; onChange: (tags: string[]) => void };

export function TagsField({ tags, onChange }: Props) {
  const [draft, setDraft] = useState('');
  const commit = () => {
    onChange(addTag(tags, draft));
    setDraft('');
  };
  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    // Enter adds a tag instead of submitting anything.
    if (event.key === 'Enter') {
      event.preventDefault();
      commit();
    }
  };
  return (
    <div className="adm-field">
      <label htmlFor="editor-tag-input">Tags</label>
      <div className="adm-inline">
        <input
          id="editor-tag-input"
          type="text"
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          onKeyDown={onKeyDown}
          placeholder="Add a tag"
        />
        <button type="button" className="adm-btn adm-btn-outline" onClick={commit}>
          Add
        </button>
      </div>
      {tags.length > 0 && (
        <ul className="adm-chips" aria-label="Tag list">
          {tags.map((tag) => (
            <li key={tag} className="adm-chip" data-testid="tag-chip">
              <span>{tag}</span>
              <button type="button" aria-label={`Remove tag ${tag}`} onClick={() => onChange(tags.filter((t) => t !== tag))}>
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
