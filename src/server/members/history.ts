/** A member's history lines (issue 48): appended oldest first and kept within MEMBER_HISTORY_LIMIT. */
import { MEMBER_HISTORY_LIMIT, type MemberEvent } from '../../schemas/member.ts';

/** How long a Stripe event's line is kept whatever the limit: its id is what makes a replayed webhook a no-op. */
const STRIPE_EVENT_KEEP_MS = 30 * 86_400_000;

/**
 * The history with `line` appended; past the limit the oldest lines go first, except those naming a
 * Stripe event younger than 30 days.
 */
export function appendHistory(history: readonly MemberEvent[], line: MemberEvent, nowMs: number): MemberEvent[] {
  const lines = [...history, line];
  let excess = lines.length - MEMBER_HISTORY_LIMIT;
  if (excess <= 0) return lines;
  return lines.filter((entry) => {
    if (excess <= 0 || entry === line) return true;
    if (entry.stripeEventId !== undefined && nowMs - Date.parse(entry.at) < STRIPE_EVENT_KEEP_MS) return true;
    excess--;
    return false;
  });
}
