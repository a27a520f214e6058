/**
 * zod as every schema uses it: in the browser without its eval-based fast path, which a strict CSP refuses (and Chrome reports even when
 * zod catches it).
 */
import { z } from 'zod';

// Set before any schema is built: zod probes `new Function` when it builds an object schema.
if (typeof window !== 'undefined') z.config({ jitless: true });

export { z };
