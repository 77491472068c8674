import rootPackage from '../../../package.json' with { type: 'json' };

/**
 * The platform's own version: the repository root's package.json, which /health also reports
 * (DECISIONS D4). A package whose `min_platform_version` is newer is refused. Validation takes
 * the version as an option so that tests (and a registry serving other platforms) choose it.
 */
export const PLATFORM_VERSION: string = rootPackage.version;
