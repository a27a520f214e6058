/** A readable word-level diff of two article bodies: removed words struck through, added ones marked. */
import { useMemo } from 'react';
import { diffBodies, hasChanges } from './body-diff.ts';

type Props = { before: string; after: string; beforeLabel: string; afterLabel: string };

export function DiffView({ before, after, beforeLabel, afterLabel }: Props) {
  const parts = useMemo(() => diffBodies(before, after), [before, after]);
  if (!hasChanges(parts))
    return (
      <p className="adm-muted" data-testid="diff-none">
        The text is the same in both.
      </p>
    );
  return (
    <div className="adm-diff" data-testid="body-diff">
      <p className="adm-muted">
        <del>{beforeLabel}</del> → <ins>{afterLabel}</ins>
      </p>
      <p className="adm-diff-text">
        {parts.map((part, i) =>
          part.kind === 'added' ? (
            <ins key={i}>{part.text}</ins>
          ) : part.kind === 'removed' ? (
            <del key={i}>{part.text}</del>
          ) : (
            <span key={i}>{part.text}</span>
          ),
        )}
      </p>
    </div>
  );
}
