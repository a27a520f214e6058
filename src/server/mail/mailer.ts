/** The mailer of a running application: opened on first use, closed with the runtime. */
import type { Runtime } from '../runtime.ts';
import { createMailer, type Mailer } from './transport.ts';

// On globalThis: the server script and the Astro bundle each load this module, and share one runtime.
const KEY = Symbol.for('meridian-news.mailers');
const registry = globalThis as unknown as { [KEY]?: WeakMap<Runtime, Mailer> };
const mailers = (registry[KEY] ??= new WeakMap<Runtime, Mailer>());

export function useMailer(runtime: Runtime): Mailer {
  let mailer = mailers.get(runtime);
  if (!mailer) {
    const created = createMailer(runtime.config);
    mailers.set(runtime, created);
    // stopRuntime() stops services: this closes the SMTP pool with the store.
    runtime.services.set('mailer', { stop: () => created.close() });
    mailer = created;
  }
  return mailer;
}
