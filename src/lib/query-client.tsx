/**
 * One TanStack QueryClient shared by every island on a page, with the defaults of docs/product.md (Interface rules: how islands fetch
 * data).
 */
import { QueryClient, QueryClientProvider, type QueryFunction } from '@tanstack/react-query';
import type { ComponentType, ReactNode } from 'react';
import { api, type QueryParams } from './api-client.ts';

/**
 * docs/product.md, Interface rules: how islands fetch data: the key's segments are joined into a path; a second segment that is an object
 * becomes query-string parameters. E.g. ['/api/articles', { section: 'world' }].
 */
export const defaultQueryFn: QueryFunction = ({ queryKey, signal }) => {
  const [path, params] = queryKey as [string, QueryParams | undefined, ...unknown[]];
  const segments = queryKey.filter((part): part is string | number => typeof part === 'string' || typeof part === 'number');
  const fullPath = params && typeof params === 'object' ? path : segments.join('/');
  return api.get(fullPath, { query: params && typeof params === 'object' ? params : undefined, signal });
};

function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        queryFn: defaultQueryFn,
        staleTime: Number.POSITIVE_INFINITY,
        refetchOnWindowFocus: false,
        refetchInterval: false,
        retry: false,
        gcTime: 5 * 60 * 1000,
      },
      mutations: { retry: false },
    },
  });
}

let browserClient: QueryClient | undefined;

/** The page's client in the browser (shared across islands); a fresh one per render on the server. */
export function getQueryClient(): QueryClient {
  if (typeof window === 'undefined') return createQueryClient();
  browserClient ??= createQueryClient();
  return browserClient;
}

export function QueryProvider({ children }: { children: ReactNode }) {
  return <QueryClientProvider client={getQueryClient()}>{children}</QueryClientProvider>;
}

/** Wraps an island's root component in the shared QueryClientProvider. */
export function withQueryClient<P extends object>(Component: ComponentType<P>): ComponentType<P> {
  const Wrapped = (props: P) => (
    <QueryProvider>
      <Component {...props} />
    </QueryProvider>
  );
  Wrapped.displayName = `withQueryClient(${Component.displayName ?? Component.name})`;
  return Wrapped;
}
