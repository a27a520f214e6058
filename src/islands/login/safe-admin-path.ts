/** Validates the `next` target of /login so it can only point back into the back office (no open redirect). */

export function safeAdminPath(value: string | null | undefined): string | undefined {
  if (!value) return undefined;
  // Same-origin admin paths only: no scheme, no protocol-relative //host, no backslash tricks.
  if (!/^\/admin(?:\/[A-Za-z0-9_\-/]*)?(?:\?[A-Za-z0-9_=&-]*)?$/.test(value)) return undefined;
  if (value.includes('//')) return undefined;
  return value;
}
