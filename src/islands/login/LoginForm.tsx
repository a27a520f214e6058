/** The /login island: username, password with show/hide, validation and throttling messages, then /admin. */
import { useState, type FormEvent } from 'react';
import { useMutation } from '@tanstack/react-query';
import { api, ApiRequestError } from '../../lib/api-client.ts';
import { withQueryClient } from '../../lib/query-client.tsx';
import type { PublicUser } from '../../schemas/auth.ts';
import { toast } from '../toast/toast-store.ts';
import { queueToastForNextPage } from '../toast/flash-toast.ts';
import { useHydrated } from '../admin/use-hydrated.ts';

type Props = { next?: string | undefined };

/** "30 seconds", "1 minute", "3 minutes" for a Retry-After in seconds. */
export function describeWait(seconds: number): string {
  if (seconds < 60) return `${seconds} ${seconds === 1 ? 'second' : 'seconds'}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} ${minutes === 1 ? 'minute' : 'minutes'}`;
}

function LoginForm({ next }: Props) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [showPassword, setShowPassword] = useState(false);
  const [problem, setProblem] = useState<string | undefined>();
  const hydrated = useHydrated();

  const login = useMutation({
    mutationFn: (credentials: { username: string; password: string }) => api.post<{ user: PublicUser }>('/api/auth/login', credentials),
    onSuccess: () => {
      setProblem(undefined);
      // Shown by the next page's Toaster: this page is about to go away.
      queueToastForNextPage({ title: 'Welcome back!' });
      window.location.assign(next ?? '/admin');
    },
    onError: (error) => {
      if (error instanceof ApiRequestError && error.status === 429) {
        const wait = describeWait(error.retryAfter ?? 60);
        const message = `Too many sign-in attempts. Please wait ${wait} before trying again.`;
        setProblem(message);
        toast({ title: 'Too many attempts', description: message, variant: 'destructive' });
        return;
      }
      const message =
        error instanceof ApiRequestError && error.status === 401
          ? 'Invalid username or password.'
          : 'Something went wrong. Please try again.';
      setProblem(message);
      toast({ title: 'Login failed', description: message, variant: 'destructive' });
    },
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!username.trim() || !password.trim()) {
      setProblem('Please enter both username and password.');
      toast({ title: 'Missing fields', description: 'Please enter both username and password.', variant: 'destructive' });
      return;
    }
    login.mutate({ username: username.trim(), password });
  };

  return (
    <form
      className="adm-card adm-login"
      data-hydrated={hydrated}
      onSubmit={submit}
      noValidate
      aria-describedby={problem ? 'login-problem' : undefined}
    >
      <h1 className="adm-title">Admin Login</h1>
      <p className="adm-muted">Sign in to manage articles, comments and news sources.</p>
      <label className="adm-field">
        <span>Username</span>
        <input
          type="text"
          name="username"
          autoComplete="username"
          autoCapitalize="none"
          spellCheck={false}
          value={username}
          onChange={(e) => setUsername(e.target.value)}
        />
      </label>
      <div className="adm-field">
        <label htmlFor="login-password">Password</label>
        <div className="adm-password">
          <input
            id="login-password"
            type={showPassword ? 'text' : 'password'}
            name="password"
            autoComplete="current-password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
          <button
            type="button"
            className="adm-btn adm-btn-ghost adm-btn-sm"
            aria-pressed={showPassword}
            aria-label={showPassword ? 'Hide password' : 'Show password'}
            onClick={() => setShowPassword((shown) => !shown)}
          >
            {showPassword ? 'Hide' : 'Show'}
          </button>
        </div>
      </div>
      {problem && (
        <p id="login-problem" className="adm-error-text" role="alert">
          {problem}
        </p>
      )}
      <button type="submit" className="adm-btn adm-btn-primary adm-btn-block" disabled={login.isPending}>
        {login.isPending ? 'Logging in...' : 'Log In'}
      </button>
    </form>
  );
}

export default withQueryClient(LoginForm);
