/** Demo content for a fresh DATA_DIR. */
import type { Runtime } from './runtime.ts';

export async function seedDemoContent(_runtime: Runtime): Promise<string> {
  return 'nothing yet';
}
