/** The release this code is: package.json's `version` (semver, bumped per release; see docs/upgrading.md), for the admin, /api/health and /api/ready. */
import pkg from '../../package.json' with { type: 'json' };

/** e.g. `1.0.0`. */
export const APP_VERSION: string = pkg.version;
