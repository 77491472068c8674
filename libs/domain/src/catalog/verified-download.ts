import { createHash } from 'node:crypto';
import type { RegistryVersion } from '@agent-platform/contracts';
import { loadArchive, PackageError, type LoadedPackage } from '@agent-platform/packages';
import { Errors } from '../errors/errors.ts';
import type { RegistryAccess } from './registry-source.ts';

/**
 * Downloads one published version and proves it is what the registry accepted under that name
 * and version before anything is installed (docs/catalog.md "Verification"):
 *
 * 1. the sha256 of the bytes received equals the version's `archive_sha256`;
 * 2. the registry signature over (name, version, that sha256, content_hash) verifies with one of
 *    the trusted keys, so a re-signed or swapped archive, or a signature made for another
 *    version, is refused;
 * 3. the archive passes the validator of local installs (the platform version check included);
 * 4. its manifest names that package and version, and its payload hash is the signed one.
 *
 * Every failure is a `CatalogError` (400) naming the package; nothing has been written yet.
 */
export async function downloadVerified(
  version: RegistryVersion,
  access: RegistryAccess,
  platformVersion: string,
): Promise<LoadedPackage> {
  const { name } = version;
  const label = `${name} ${version.version}`;
  const refuse = (message: string, details: Record<string, unknown> = {}) =>
    Errors.catalog(`${label}: ${message}; nothing was installed`, { name, version: version.version, ...details });

  const bytes = await access.source.download(name, version.version);
  if (bytes === null) throw refuse(`the registry ${access.source.url} lists this version but serves no archive for it`);
  const archiveSha256 = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
  if (archiveSha256 !== version.archive_sha256)
    throw refuse(
      `the downloaded archive's sha256 (${archiveSha256}) differs from the archive_sha256 the registry published (${version.archive_sha256}): the archive was altered`,
      { reason: 'archive_hash_mismatch', archive_sha256: archiveSha256, expected_archive_sha256: version.archive_sha256 },
    );

  const signed = { name, version: version.version, archive_sha256: archiveSha256, content_hash: version.content_hash };
  if (access.trust.verify(signed, version.signature) === null) {
    const untrusted = !access.trust.keyIds.includes(version.key_id);
    throw refuse(
      untrusted
        ? `signed by key ${version.key_id}, which is not in [catalog] trusted_keys (trusted: ${access.trust.keyIds.join(', ')})`
        : `its registry signature does not verify with the trusted key ${version.key_id}: the archive, its name, version or content hash is not what the registry signed`,
      { reason: untrusted ? 'untrusted_key' : 'bad_signature', key_id: version.key_id },
    );
  }

  let pkg: LoadedPackage;
  try {
    pkg = loadArchive(bytes, { platformVersion });
  } catch (error) {
    if (!(error instanceof PackageError)) throw error;
    throw refuse(`the archive is not a valid package: ${error.problems.map((p) => p.message).join('; ')}`, {
      reason: 'invalid_package',
      problems: error.problems,
    });
  }
  const manifest = pkg.manifest.package;
  if (manifest.name !== name || manifest.version !== version.version)
    throw refuse(`the archive holds ${manifest.name} ${manifest.version}`, { reason: 'wrong_package' });
  if (pkg.content_hash !== version.content_hash)
    throw refuse(`the payload hash ${pkg.content_hash} is not the signed content_hash ${version.content_hash}`, {
      reason: 'content_hash_mismatch',
    });
  return pkg;
}
