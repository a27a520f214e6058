/** The If-Match header of an article write: which version the caller edited (issue 14). */
import { AppError } from '../server/errors.ts';

/** The version named by If-Match (`"7"`, `W/"7"` or `7`); undefined when absent or `*`; 400 when unreadable. */
export function ifMatchVersion(request: Request): number | undefined {
  const header = request.headers.get('if-match')?.trim();
  if (!header || header === '*') return undefined;
  const match = /^(?:W\/)?"?(\d{1,9})"?$/.exec(header);
  if (!match || Number(match[1]) < 1) throw new AppError(400, 'If-Match must name an article version, e.g. "3"');
  return Number(match[1]);
}
