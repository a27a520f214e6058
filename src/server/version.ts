/** The release this code is: package.json's `version` (semver, bumped per release; see docs/upgrading.md). */
import pkg from '../../package.json' with { type: 'json' };

/** e.g. `1.0.0`: shown in the admin, `/api/health` and `/api/ready`. */
export const APP_VERSION: string = pkg.version;
