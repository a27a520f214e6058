/**
 * The only process-wide registries (values on globalThis), each with the reason it cannot be passed
 * down instead; everything else is built once by src/server/app.ts and handed down (docs/architecture.md, "Wiring").
 * tests/unit/layers.test.ts fails on `Symbol.for` or `globalThis[` anywhere else.
 */

/** Why each registry exists; a new one needs a line here, and a reason no caller could hand the value down. */
export const PROCESS_WIDE = {
  /** Islands are separate browser bundles that may each include the toast store: one channel per page. */
  toasts: 'meridian-news.toasts',
  /**
   * The store this process renders from: the machine files' twin endpoints (feeds, sitemaps) run in the
   * Astro bundle, its own copy of our modules, called over loopback by the server and `npm run rebuild`,
   * which opened the store in theirs. Goes when those files render on the render thread (issue 32, item 1).
   */
  renderStore: 'meridian-news.render-store',
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

/** The value registered under `name`, or undefined when none is. */
export function peekProcessWide<T>(name: keyof typeof PROCESS_WIDE): T | undefined {
  return (globalThis as unknown as Registry)[Symbol.for(PROCESS_WIDE[name])] as T | undefined;
}

/** Registers `value` under `name` (undefined removes it). */
export function setProcessWide(name: keyof typeof PROCESS_WIDE, value: unknown): void {
  const registry = globalThis as unknown as Registry;
  const key = Symbol.for(PROCESS_WIDE[name]);
  if (value === undefined) delete registry[key];
  else registry[key] = value;
}
