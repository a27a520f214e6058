/** The one fetch helper islands use to call /api: credentials included, JSON in and out, errors as ApiRequestError. */
import type { ApiError } from '../schemas/common.ts';

export class ApiRequestError extends Error {
  readonly status: number;
  /** The server's `error` field when the body was the API's JSON error shape. */
  readonly serverMessage: string | undefined;
  readonly retryAfter: number | undefined;
  /** The parsed JSON body, when there was one (e.g. the current article of a 409). */
  readonly body: unknown;

  constructor(status: number, bodyText: string, statusText: string, retryAfter?: number) {
    // docs/product.md, Interface rules: confirmations, toasts and errors: the message is the status code, a colon and space, then the body
    // text (or status text).
    super(`${status}: ${bodyText || statusText}`);
    this.name = 'ApiRequestError';
    this.status = status;
    this.retryAfter = retryAfter;
    let serverMessage: string | undefined;
    let body: unknown;
    try {
      const parsed = JSON.parse(bodyText) as Partial<ApiError>;
      body = parsed;
      if (typeof parsed.error === 'string') serverMessage = parsed.error;
    } catch {
      // Not JSON: no server message.
    }
    this.serverMessage = serverMessage;
    this.body = body;
  }
}

export type QueryParams = Record<string, string | number | boolean | null | undefined>;

/** Builds a path with a query string of the non-empty entries. */
export function withQuery(path: string, params?: QueryParams): string {
  if (!params) return path;
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null || value === '') continue;
    search.set(key, String(value));
  }
  const qs = search.toString();
  return qs ? `${path}?${qs}` : path;
}

export type ApiOptions = {
  body?: unknown;
  query?: QueryParams;
  /** `returnNull` makes a 401 answer null instead of throwing (the current-user call). */
  on401?: 'throw' | 'returnNull';
  signal?: AbortSignal;
  /** Extra request headers (e.g. If-Match with the version the editor started from). */
  headers?: Record<string, string>;
};

export async function apiRequest<T>(method: string, path: string, options: ApiOptions = {}): Promise<T> {
  const init: RequestInit = { method, credentials: 'include', headers: { ...options.headers } };
  if (options.signal) init.signal = options.signal;
  if (options.body !== undefined) {
    init.headers = { ...options.headers, 'Content-Type': 'application/json' };
    init.body = JSON.stringify(options.body);
  }
  const response = await fetch(withQuery(path, options.query), init);
  if (response.status === 401 && options.on401 === 'returnNull') return null as T;
  if (!response.ok) {
    const text = await response.text().catch(() => '');
    const retryAfter = Number(response.headers.get('retry-after')) || undefined;
    throw new ApiRequestError(response.status, text, response.statusText, retryAfter);
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

export const api = {
  get: <T>(path: string, options?: ApiOptions) => apiRequest<T>('GET', path, options),
  post: <T>(path: string, body?: unknown, options?: ApiOptions) => apiRequest<T>('POST', path, { ...options, body }),
  put: <T>(path: string, body?: unknown, options?: ApiOptions) => apiRequest<T>('PUT', path, { ...options, body }),
  delete: <T>(path: string, options?: ApiOptions) => apiRequest<T>('DELETE', path, options),
};

/** The server's message for a toast, or a fallback. */
export function serverMessageOf(error: unknown, fallback: string): string {
  return error instanceof ApiRequestError && error.serverMessage ? error.serverMessage : fallback;
}
