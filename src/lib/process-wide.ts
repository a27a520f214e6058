/**
 * The only process-wide registries (values on globalThis), each with the reason it cannot be passed
 * down instead; everything else is built once by src/server/app.ts and handed down (docs/architecture.md, "Wiring").
 * tests/unit/layers.test.ts fails on `Symbol.for` or `globalThis[` anywhere else.
 */

/** Why each registry exists; a new one needs a line here, and a reason no caller could hand the value down. */
export const PROCESS_WIDE = {
  /** Islands are separate browser bundles that may each include the toast store: one channel per page. */
  toasts: 'meridian-news.toasts',
  /** `astro dev` only: Vite evaluates a changed module again, and the runtime must open the store once per process. */
  devRuntime: 'meridian-news.dev-runtime',
} as const;

type Registry = Record<symbol, unknown>;

/** The value registered under `name` in this process, made by `create` on first use. */
export function getProcessWide<T>(name: keyof typeof PROCESS_WIDE, create: () => T): T {
  const registry = globalThis as unknown as Registry;
  const key = Symbol.for(PROCESS_WIDE[name]);
  if (!(key in registry)) registry[key] = create();
  return registry[key] as T;
}
