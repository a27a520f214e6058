/**
 * Users tab (admins, issue 14): add a user with a role (the generated password shown once), change roles, disable, reset passwords, delete.
 */
import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ApiRequestError } from '../../lib/api-client.ts';
import { ROLES, type Role, type UserSummary } from '../../schemas/auth.ts';
import { toast } from '../toast/toast-store.ts';
import { formatDateTime } from './admin-format.ts';
import { confirmDelete, QueryFailure, Spinner, StatusBadge, toastFailure } from './AdminUi.tsx';
import { useCurrentUser } from '../auth/use-current-user.ts';

const USERS_KEY = ['/api/users'] as const;
type UserAnswer = { user: UserSummary; password?: string };

/** The server's message (e.g. "Cannot demote the last active admin") when it sent one. */
function failure(fallback: string) {
  return (error: unknown) => toastFailure(error instanceof ApiRequestError && error.serverMessage ? error.serverMessage : fallback);
}

export function UsersTab() {
  const client = useQueryClient();
  const { data: me } = useCurrentUser();
  const users = useQuery<{ items: UserSummary[] }>({ queryKey: USERS_KEY });
  const [username, setUsername] = useState('');
  const [role, setRole] = useState<Role>('contributor');
  // A generated password is shown once, here, until dismissed; it is never stored in clear.
  const [shown, setShown] = useState<{ username: string; password: string } | undefined>();
  const refresh = () => client.invalidateQueries({ queryKey: USERS_KEY });

  const reveal = (answer: UserAnswer) => answer.password && setShown({ username: answer.user.username, password: answer.password });
  const add = useMutation({
    mutationFn: (input: { username: string; role: Role }) => api.post<UserAnswer>('/api/users', input),
    onSuccess: (answer) => {
      toast({ title: 'User added', description: `${answer.user.username} (${answer.user.role})` });
      reveal(answer);
      setUsername('');
    },
    onError: failure('Failed to add the user.'),
    onSettled: refresh,
  });
  const change = useMutation({
    mutationFn: ({ id, ...body }: { id: string; role?: Role; disabled?: boolean; resetPassword?: true }) =>
      api.put<UserAnswer>(`/api/users/${id}`, body),
    onSuccess: (answer) => {
      toast({ title: 'User updated', description: answer.user.username });
      reveal(answer);
    },
    onError: failure('Failed to update the user.'),
    onSettled: refresh,
  });
  const remove = useMutation({
    mutationFn: (id: string) => api.delete<void>(`/api/users/${id}`),
    onSuccess: () => toast({ title: 'User deleted' }),
    onError: failure('Failed to delete the user.'),
    onSettled: refresh,
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!username.trim()) {
      toast({ title: 'Validation error', description: 'Please enter a username.', variant: 'destructive' });
      return;
    }
    add.mutate({ username: username.trim(), role });
  };

  return (
    <div className="adm-stack">
      <form className="adm-card adm-filters" aria-label="Add a user" onSubmit={submit}>
        <label className="adm-field adm-field-wide">
          <span>Username</span>
          <input type="text" value={username} onChange={(e) => setUsername(e.target.value)} autoComplete="off" placeholder="e.g. j.doe" />
        </label>
        <label className="adm-field">
          <span>Role</span>
          <select value={role} onChange={(e) => setRole(e.target.value as Role)}>
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <div className="adm-actions adm-filters-actions">
          <button type="submit" className="adm-btn adm-btn-primary" disabled={add.isPending}>
            Add User
          </button>
        </div>
      </form>

      {shown && (
        <section className="adm-card" role="status" data-testid="generated-password">
          <p>
            Password for <strong>{shown.username}</strong>: <code className="adm-mono">{shown.password}</code>
          </p>
          <p className="adm-muted">Shown only once: pass it on now. They can sign in with it right away.</p>
          <button type="button" className="adm-btn adm-btn-outline adm-btn-sm" onClick={() => setShown(undefined)}>
            Done
          </button>
        </section>
      )}

      {users.isPending ? (
        <Spinner label="Loading users" />
      ) : users.isError ? (
        <QueryFailure what="users" onRetry={() => void users.refetch()} />
      ) : (
        <ul className="adm-list">
          {users.data.items.map((user) => {
            const busy = change.isPending && change.variables?.id === user.id;
            return (
              <li key={user.id} className="adm-card adm-comment" data-testid="admin-user" data-username={user.username}>
                <div className="adm-comment-head">
                  <strong className="adm-break">
                    {user.username}
                    {user.id === me?.id && ' (you)'}
                  </strong>
                  <div className="adm-meta">
                    <StatusBadge status={user.disabled ? 'disabled' : 'active'} />
                    <time dateTime={user.createdAt}>{formatDateTime(user.createdAt)}</time>
                  </div>
                </div>
                <div className="adm-actions">
                  <label className="adm-field">
                    <span className="adm-sr-only">Role of {user.username}</span>
                    <select
                      value={user.role}
                      disabled={busy}
                      onChange={(e) => change.mutate({ id: user.id, role: e.target.value as Role })}
                    >
                      {ROLES.map((r) => (
                        <option key={r} value={r}>
                          {r}
                        </option>
                      ))}
                    </select>
                  </label>
                  <button
                    type="button"
                    className="adm-btn adm-btn-outline adm-btn-sm"
                    disabled={busy}
                    onClick={() => change.mutate({ id: user.id, disabled: !user.disabled })}
                  >
                    {user.disabled ? 'Enable' : 'Disable'}
                  </button>
                  <button
                    type="button"
                    className="adm-btn adm-btn-outline adm-btn-sm"
                    disabled={busy}
                    onClick={() => change.mutate({ id: user.id, resetPassword: true })}
                  >
                    Reset password
                  </button>
                  {user.id !== me?.id && (
                    <button
                      type="button"
                      className="adm-btn adm-btn-danger adm-btn-sm"
                      disabled={remove.isPending && remove.variables === user.id}
                      onClick={() => {
                        if (confirmDelete(`the user ${user.username}`)) remove.mutate(user.id);
                      }}
                    >
                      Delete
                    </button>
                  )}
                </div>
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}
