/** The version of this build (package.json's), for /api/health and /api/ready. */
import pkg from '../../package.json' with { type: 'json' };

export const VERSION: string = pkg.version;
