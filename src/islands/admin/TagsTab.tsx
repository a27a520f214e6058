/** Tags tab (issue 35): every tag readers can browse, with Merge into another tag and Hide / Show for junk tags that feeds bring. */
import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, serverMessageOf } from '../../lib/api-client.ts';
import type { TagList } from '../../schemas/taxonomy.ts';
import { toast } from '../toast/toast-store.ts';
import { adminKeys, invalidateArticles } from './admin-queries.ts';
import { QueryFailure, Spinner, toastFailure } from './AdminUi.tsx';

export function TagsTab() {
  const client = useQueryClient();
  const tags = useQuery<TagList>({ queryKey: adminKeys.tags() });
  const [from, setFrom] = useState('');
  const [into, setInto] = useState('');
  const refresh = () => Promise.all([client.invalidateQueries({ queryKey: adminKeys.tags() }), invalidateArticles(client)]);
  const merge = useMutation({
    mutationFn: (body: { from: string; into: string }) => api.post<{ retagged: number }>('/api/tags/merge', body),
    onSuccess: (result, body) => {
      toast({
        title: 'Tags merged',
        description: `${result.retagged} article(s) moved from “${body.from}” to “${body.into}”; the old page redirects.`,
      });
      setFrom('');
      setInto('');
    },
    onError: (error) => toastFailure(serverMessageOf(error, 'Failed to merge the tags. Please try again.')),
    onSettled: refresh,
  });
  const hide = useMutation({
    mutationFn: (body: { slug: string; hidden: boolean }) =>
      api.put<{ slug: string; hidden: boolean }>(`/api/tags/${body.slug}`, { hidden: body.hidden }),
    onSuccess: (result) =>
      toast({
        title: result.hidden ? 'Tag hidden' : 'Tag shown',
        description: result.hidden ? `“${result.slug}” has no page and is no longer linked.` : `“${result.slug}” has its page again.`,
      }),
    onError: (error) => toastFailure(serverMessageOf(error, 'Failed to change the tag. Please try again.')),
    onSettled: refresh,
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!from || !into || from === into) {
      toast({ title: 'Validation error', description: 'Choose two different tags.', variant: 'destructive' });
      return;
    }
    merge.mutate({ from, into });
  };

  if (tags.isPending) return <Spinner label="Loading tags" />;
  if (tags.isError) return <QueryFailure what="the tags" onRetry={() => void tags.refetch()} />;
  const shown = tags.data.tags.filter((t) => !t.hidden);
  return (
    <div className="adm-stack">
      <form className="adm-card adm-filters" aria-label="Merge two tags" onSubmit={submit}>
        <TagSelect label="Merge tag" tags={shown} value={from} onChange={setFrom} testId="merge-from" />
        <TagSelect label="Into tag" tags={shown} value={into} onChange={setInto} testId="merge-into" />
        <div className="adm-actions adm-filters-actions">
          <button type="submit" className="adm-btn adm-btn-primary" disabled={merge.isPending}>
            Merge
          </button>
        </div>
      </form>
      <section className="adm-card adm-stack" aria-labelledby="tags-title">
        <h2 id="tags-title" className="adm-card-title">
          Tags
        </h2>
        <p className="adm-muted">
          Every tag of published articles has a page at /tag/name. Hide a junk tag to remove its page and its links; merged tags redirect to
          the tag they were merged into.
        </p>
        {tags.data.tags.length === 0 ? (
          <p className="adm-empty">No published article has a tag yet.</p>
        ) : (
          <ul className="adm-list" data-testid="tag-list">
            {tags.data.tags.map((tag) => (
              <li key={tag.slug} className="adm-row" data-testid="tag-item">
                <div className="adm-row-main">
                  <span className="adm-row-title">{tag.name}</span>
                  <div className="adm-muted">
                    {tag.hidden ? (
                      'Hidden'
                    ) : (
                      <a href={`/tag/${tag.slug}`} target="_blank" rel="noopener">
                        /tag/{tag.slug}
                        <span className="visually-hidden"> (opens in a new tab)</span>
                      </a>
                    )}{' '}
                    · {tag.count} article{tag.count === 1 ? '' : 's'}
                  </div>
                </div>
                <div className="adm-actions">
                  <button
                    type="button"
                    className="adm-btn adm-btn-sm adm-btn-outline"
                    disabled={hide.isPending}
                    onClick={() => hide.mutate({ slug: tag.slug, hidden: !tag.hidden })}
                    aria-label={`${tag.hidden ? 'Show' : 'Hide'} tag ${tag.name}`}
                  >
                    {tag.hidden ? 'Show' : 'Hide'}
                  </button>
                </div>
              </li>
            ))}
          </ul>
        )}
        {tags.data.merged.length > 0 && (
          <>
            <h3 className="adm-card-title">Merged</h3>
            <ul className="adm-list" data-testid="merged-list">
              {tags.data.merged.map((m) => (
                <li key={m.from} className="adm-row">
                  /tag/{m.from} → /tag/{m.into}
                </li>
              ))}
            </ul>
          </>
        )}
      </section>
    </div>
  );
}

/** One of the merge form's two tag pickers: the tags readers can browse, with their article counts. */
function TagSelect(props: { label: string; tags: TagList['tags']; value: string; onChange: (slug: string) => void; testId: string }) {
  return (
    <label className="adm-field adm-field-wide">
      <span>{props.label}</span>
      <select value={props.value} onChange={(e) => props.onChange(e.target.value)} data-testid={props.testId}>
        <option value="">Choose a tag</option>
        {props.tags.map((t) => (
          <option key={t.slug} value={t.slug}>
            {t.name} ({t.count})
          </option>
        ))}
      </select>
    </label>
  );
}
