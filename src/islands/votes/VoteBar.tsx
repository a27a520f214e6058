/** Like and dislike buttons with live counts: one vote per browser, disabled while a vote is being recorded. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../lib/api-client.ts';
import { withQueryClient } from '../../lib/query-client.tsx';
import type { VoteKind, VoteResult } from '../../schemas/article.ts';
import { toast } from '../toast/toast-store.ts';

const MESSAGES: Record<VoteKind, { success: string; failure: string }> = {
  like: { success: 'Your like has been recorded (10 points).', failure: 'Failed to record your like.' },
  dislike: { success: 'Your feedback has been recorded (1 point).', failure: 'Failed to record your feedback.' },
};

const BUTTONS: Record<VoteKind, { label: string; icon: string }> = {
  like: { label: 'Like', icon: 'M7 11v9H4v-9zm2 9h8.2a2 2 0 0 0 2-1.6l1.2-6A2 2 0 0 0 18.4 10H14l.7-3.5a1.8 1.8 0 0 0-3.3-1.3L9 10z' },
  dislike: {
    label: 'Dislike',
    icon: 'M17 13V4h3v9zm-2-9H6.8a2 2 0 0 0-2 1.6l-1.2 6A2 2 0 0 0 5.6 14H10l-.7 3.5a1.8 1.8 0 0 0 3.3 1.3L15 14z',
  },
};

type VoteButtonProps = { kind: VoteKind; count: number | undefined; pressed: boolean; disabled: boolean; onVote: (kind: VoteKind) => void };

/** One vote button: its icon, label and live count ('–' until the count has loaded). */
function VoteButton({ kind, count, pressed, disabled, onVote }: VoteButtonProps) {
  const { label, icon } = BUTTONS[kind];
  return (
    <button
      type="button"
      className="vote-btn"
      aria-pressed={pressed}
      disabled={disabled}
      onClick={() => onVote(kind)}
      data-testid={`${kind}-button`}
    >
      <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true">
        <path d={icon} fill="currentColor" />
      </svg>
      <span>{label}</span>
      <span className="vote-count" data-testid={`${kind}-count`}>
        {count === undefined ? '–' : count.toLocaleString('en-US')}
      </span>
    </button>
  );
}

function VoteBar({ articleId }: { articleId: string }) {
  const queryClient = useQueryClient();
  const key = ['/api/articles', articleId, 'vote'];
  const { data } = useQuery<VoteResult>({ queryKey: key });
  const vote = useMutation({
    mutationFn: (kind: VoteKind) => api.post<VoteResult | undefined>(`/api/articles/${encodeURIComponent(articleId)}/${kind}`),
    onSuccess: async (result, kind) => {
      if (result && typeof result.likes === 'number') queryClient.setQueryData(key, result);
      else await queryClient.invalidateQueries({ queryKey: key });
      toast({ title: 'Thanks for your feedback!', description: MESSAGES[kind].success });
    },
    onError: (_error, kind) => toast({ title: 'Error', description: MESSAGES[kind].failure, variant: 'destructive' }),
  });

  return (
    <div className="vote-bar" role="group" aria-label="Rate this article" data-testid="vote-bar">
      <VoteButton kind="like" count={data?.likes} pressed={data?.vote === 'like'} disabled={vote.isPending} onVote={vote.mutate} />
      <VoteButton kind="dislike" count={data?.dislikes} pressed={data?.vote === 'dislike'} disabled={vote.isPending} onVote={vote.mutate} />
    </div>
  );
}

export default withQueryClient(VoteBar);
