/** The current time as an ISO string; one place so tests and services agree on the format. */
export function nowIso(): string {
  return new Date().toISOString();
}
