/** Small pieces the dashboard tabs share: failure toasts, delete confirmation, status badges, spinner. */
import { toast } from '../toast/toast-store.ts';

/** Failures of the back office: a destructive 'Error' toast with the catalogue's text (SPEC section 8). */
export function toastFailure(description: string): void {
  toast({ title: 'Error', description, variant: 'destructive' });
}

/** SPEC section 9: every delete asks first. */
export function confirmDelete(what: string): boolean {
  return window.confirm(`Delete ${what}? This cannot be undone.`);
}

export function StatusBadge({ status }: { status: string }) {
  return <span className={`adm-badge adm-badge-${status}`}>{status}</span>;
}

export function Spinner({ label }: { label: string }) {
  return (
    <div className="adm-spinner-wrap" role="status" aria-live="polite">
      <span className="adm-spinner" aria-hidden="true" />
      <span className="adm-sr-only">{label}</span>
    </div>
  );
}

export function QueryFailure({ what, onRetry }: { what: string; onRetry: () => void }) {
  return (
    <div className="adm-empty" role="alert">
      <p>Could not load {what}.</p>
      <button type="button" className="adm-btn adm-btn-outline" onClick={onRetry}>
        Try again
      </button>
    </div>
  );
}
