/** The mailer of a running application: opened on first use, kept on the runtime and closed with it. */
import type { Runtime } from '../runtime.ts';
import { createMailer, type Mailer } from './transport.ts';

export function useMailer(runtime: Runtime): Mailer {
  if (!runtime.mailer) {
    // Made on first use, not at start: tests and `npm run user` set or need no SMTP_URL before then.
    const created = createMailer(runtime.config);
    runtime.mailer = created;
    // stopRuntime() stops services: this closes the SMTP pool with the store.
    runtime.services.set('mailer', { stop: () => created.close() });
  }
  return runtime.mailer;
}
