/** Small pieces the dashboard tabs share: failure toasts, delete confirmation, status badges, spinner, the moderation filter bar. */
import type { FormEvent, ReactNode } from 'react';
import { toast } from '../toast/toast-store.ts';

/**
 * Failures of the back office: a destructive 'Error' toast with the catalogue's text (docs/product.md, Interface rules: confirmations,
 * toasts and errors).
 */
export function toastFailure(description: string): void {
  toast({ title: 'Error', description, variant: 'destructive' });
}

/** Every delete asks first (docs/product.md, Interface rules: confirmations, toasts and errors). */
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

type SearchStatusFilterProps<S extends string> = {
  /** What the list holds, for the form's label and the search field ("comments"). */
  what: string;
  placeholder: string;
  draft: string;
  onDraft: (value: string) => void;
  status: '' | S;
  statuses: readonly (readonly [S, string])[];
  /** A status change applies at once (and goes back to page 1); the search text on submit. */
  onStatus: (status: '' | S) => void;
  onSubmit: (event: FormEvent) => void;
  /** Further actions after the Search button. */
  children?: ReactNode;
};

/** The filter bar of a moderation list: a search field, a status select (All Statuses first) and Search. */
export function SearchStatusFilter<S extends string>({
  what,
  placeholder,
  draft,
  onDraft,
  status,
  statuses,
  onStatus,
  onSubmit,
  children,
}: SearchStatusFilterProps<S>) {
  return (
    <form className="adm-card adm-filters" role="search" aria-label={`Filter ${what}`} onSubmit={onSubmit}>
      <label className="adm-field adm-field-wide">
        <span>Search {what}</span>
        <input type="search" value={draft} onChange={(e) => onDraft(e.target.value)} placeholder={placeholder} />
      </label>
      <label className="adm-field">
        <span>Status</span>
        <select value={status} onChange={(e) => onStatus(e.target.value as '' | S)}>
          <option value="">All Statuses</option>
          {statuses.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </label>
      <div className="adm-actions adm-filters-actions">
        <button type="submit" className="adm-btn adm-btn-primary">
          Search
        </button>
        {children}
      </div>
    </form>
  );
}
