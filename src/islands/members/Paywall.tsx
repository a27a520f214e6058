/**
 * The paywall of a gated article (issue 48): the teaser (the static HTML handed in as children) and a
 * sign-up or subscribe box, until the content API says this reader may read the rest; then the whole
 * body in the teaser's place.
 */
import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { api, ApiRequestError } from '../../lib/api-client.ts';
import { withQueryClient } from '../../lib/query-client.tsx';
import { hasMemberHint, hasSignedInHint } from '../../lib/signed-in-hint.ts';
import type { Access } from '../../schemas/member.ts';

type Props = { articleId: string; access: Exclude<Access, 'public'>; path: string; children?: ReactNode };

/** What the content API said: the whole body, nobody signed in, or a level too low. */
type Answer = { kind: 'open'; bodyHtml: string } | { kind: 'signed-out' } | { kind: 'upgrade' };

async function askContent(articleId: string, signal: AbortSignal): Promise<Answer> {
  try {
    const answer = await api.get<{ bodyHtml: string } | null>(`/api/members/content/${encodeURIComponent(articleId)}`, {
      on401: 'returnNull',
      signal,
    });
    return answer ? { kind: 'open', bodyHtml: answer.bodyHtml } : { kind: 'signed-out' };
  } catch (error) {
    if (error instanceof ApiRequestError && error.status === 403) return { kind: 'upgrade' };
    throw error;
  }
}

function Paywall({ articleId, access, path, children }: Props) {
  // Without a hint cookie nobody is signed in (neither a member nor staff, who read every story): the box stays and nothing is asked.
  const { data } = useQuery({
    queryKey: ['/api/members/content', articleId],
    queryFn: ({ signal }) => askContent(articleId, signal),
    enabled: hasMemberHint() || hasSignedInHint(),
  });
  // .article-gated is the JSON-LD's cssSelector: the part of the story behind the gate, the box until it opens.
  if (data?.kind === 'open')
    return <div className="article-gated" data-testid="article-gated" dangerouslySetInnerHTML={{ __html: data.bodyHtml }} />;
  const next = encodeURIComponent(path);
  const signInHref = `/account/sign-in?next=${next}`;
  // The account page sends a signed-out reader through sign-in first, then back to its billing part.
  const subscribeHref = `/account?next=${next}#billing`;
  // Until an answer comes (and when it fails), the box a signed-out reader sees: the static HTML already holds it.
  const upgrade = data?.kind === 'upgrade';
  const heading = upgrade || access === 'paid' ? 'This story is for paying subscribers' : 'This story is for members';
  return (
    <>
      {children}
      <div className="article-gated">
        <aside className="paywall" aria-labelledby={`paywall-${articleId}`} data-testid="paywall" data-pagefind-ignore>
          <h2 id={`paywall-${articleId}`} className="paywall-title">
            {heading}
          </h2>
          {upgrade || access === 'paid' ? (
            <>
              <p className="paywall-text">
                {upgrade
                  ? 'Your membership does not include it. Subscribe to read the rest of this story and every other paid one.'
                  : 'Subscribe to read the rest of this story, or sign in if you already subscribe.'}
              </p>
              <p className="paywall-actions">
                <a className="btn btn-primary" href={subscribeHref}>
                  Subscribe
                </a>
                {!upgrade && (
                  <a className="btn" href={signInHref}>
                    Sign in
                  </a>
                )}
              </p>
            </>
          ) : (
            <>
              <p className="paywall-text">Sign up free, or sign in, to read the rest of this story.</p>
              <p className="paywall-actions">
                <a className="btn btn-primary" href={signInHref}>
                  Sign up free
                </a>
                <a className="btn" href={signInHref}>
                  Sign in
                </a>
              </p>
            </>
          )}
        </aside>
      </div>
    </>
  );
}

export default withQueryClient(Paywall);
