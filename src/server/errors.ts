/** Domain errors with the HTTP status the API edge maps them to. */
import { isStoreUnavailable } from '../store/types.ts';

export type AppErrorIssue = { path: (string | number)[]; message: string };

export class AppError extends Error {
  /** Brand checked instead of instanceof: the server script and the Astro bundle each load a copy of this module. */
  readonly isAppError = true;
  readonly status: number;
  readonly issues: AppErrorIssue[] | undefined;
  readonly headers: Record<string, string> | undefined;
  /** Extra fields of the JSON answer beside `error` (e.g. the current article of a 409). */
  readonly details: Record<string, unknown> | undefined;

  constructor(
    status: number,
    message: string,
    options: { issues?: AppErrorIssue[]; headers?: Record<string, string>; details?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.details = options.details;
    this.name = 'AppError';
    this.status = status;
    this.issues = options.issues;
    this.headers = options.headers;
  }
}

export function isAppError(error: unknown): error is AppError {
  return typeof error === 'object' && error !== null && (error as { isAppError?: unknown }).isAppError === true;
}

export const notFound = (what: string) => new AppError(404, `${what} not found`);
export const badRequest = (message: string, issues?: AppErrorIssue[]) => new AppError(400, message, issues ? { issues } : {});
export const conflict = (message: string) => new AppError(409, message);
export const unauthorized = (message = 'Sign in required') => new AppError(401, message);
export const tooManyRequests = (retryAfterSeconds: number, message = 'Too many requests, please try again later.') =>
  new AppError(429, message, { headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) } });

/**
 * A dependency that is down (a full disk, a database that does not answer, a mail server that is
 * gone): 503 with Retry-After and a sentence a person understands, never a 500. The API logs it once a
 * minute per message, unless it was `reported` where it was met (a full disk has its own line).
 */
export class ServiceUnavailableError extends AppError {
  /** Brand checked instead of instanceof, as for AppError. */
  readonly isServiceUnavailable = true;
  /** How soon a retry may succeed, in seconds (the Retry-After header). */
  readonly retryAfterS: number;
  /** Logged already where it was met (once a minute): the API adds no line of its own. */
  readonly reported: boolean;

  constructor(message: string, options: { retryAfterS?: number; cause?: unknown; reported?: boolean } = {}) {
    const retryAfterS = Math.max(1, Math.ceil(options.retryAfterS ?? 5));
    super(503, message, { headers: { 'Retry-After': String(retryAfterS) }, cause: options.cause });
    this.name = 'ServiceUnavailableError';
    this.retryAfterS = retryAfterS;
    this.reported = options.reported ?? false;
  }
}

/**
 * The unavailability an error stands for, if it is one: a ServiceUnavailableError (or any 503 the
 * domain chose) as it is, a store that cannot reach its database as a ServiceUnavailableError.
 */
export function serviceUnavailableOf(error: unknown): AppError | undefined {
  if (isAppError(error)) return error.status === 503 ? error : undefined;
  if (isStoreUnavailable(error)) return new ServiceUnavailableError(error.message, { retryAfterS: error.retryAfterS, cause: error });
  return undefined;
}

/** Whether an error is a ServiceUnavailableError (a brand, as for AppError: module copies differ). */
export function isServiceUnavailable(error: unknown): error is ServiceUnavailableError {
  return isAppError(error) && (error as { isServiceUnavailable?: unknown }).isServiceUnavailable === true;
}
