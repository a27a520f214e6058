/** Appending a correction to a published article (issue 14): it shows under the article and on /corrections. */
import { useState, type FormEvent } from 'react';
import { useMutation } from '@tanstack/react-query';
import { api } from '../../lib/api-client.ts';
import type { Correction } from '../../schemas/article.ts';
import { formatDateTime } from '../admin/admin-format.ts';
import { toast } from '../toast/toast-store.ts';
import { ifMatch } from './editor-conflict.ts';

type Props = {
  articleId: string;
  version: number;
  corrections: Correction[];
  /** A correction is a save: the editor moves to the next version. */
  onAdded: (correction: Correction) => void;
  onFailed: (error: unknown) => void;
};

export function CorrectionsField({ articleId, version, corrections, onAdded, onFailed }: Props) {
  const [text, setText] = useState('');
  const add = useMutation({
    mutationFn: (value: string) =>
      api.post<Correction>(`/api/articles/${articleId}/corrections`, { text: value }, { headers: ifMatch(version) }),
    onSuccess: (correction) => {
      setText('');
      onAdded(correction);
      toast({ title: 'Correction published', description: 'It shows at the end of the article and on the corrections page.' });
    },
    onError: onFailed,
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (text.trim()) add.mutate(text.trim());
  };
  return (
    <section className="adm-card adm-form-stack" aria-labelledby="corrections-heading">
      <h2 id="corrections-heading" className="adm-card-title">
        Corrections
      </h2>
      {corrections.length > 0 && (
        <ul className="adm-list" data-testid="editor-corrections">
          {corrections.map((c) => (
            <li key={c.id}>
              <time dateTime={c.at}>{formatDateTime(c.at)}</time>: {c.text}
            </li>
          ))}
        </ul>
      )}
      <form className="adm-form-stack" onSubmit={submit}>
        <label className="adm-field">
          <span>New correction</span>
          <textarea
            rows={2}
            value={text}
            maxLength={2000}
            onChange={(e) => setText(e.target.value)}
            placeholder="An earlier version of this article said…"
          />
        </label>
        <button type="submit" className="adm-btn adm-btn-outline" disabled={add.isPending || !text.trim()}>
          Add correction
        </button>
      </form>
    </section>
  );
}
