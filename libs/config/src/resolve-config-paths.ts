import { isAbsolute, resolve } from 'node:path';
import type { PlatformConfig } from '@agent-platform/contracts';

/**
 * Makes every path in the config absolute, relative ones resolved against `baseDir` (the config
 * file's directory). A file that names `./.agent-platform` means the one beside the file,
 * whatever directory the process was started from. Returns a new object.
 */
export function resolveConfigPaths(config: PlatformConfig, baseDir: string): PlatformConfig {
  const at = (path: string) => (isAbsolute(path) ? path : resolve(baseDir, path));
  // An empty path means "the default under data_dir" and stays empty.
  const optional = (path: string) => (path === '' ? '' : at(path));
  const listen = (address: string) => (address.startsWith('unix:') ? `unix:${at(address.slice('unix:'.length))}` : address);
  const { server, registry, storage, licence } = config;
  return {
    ...config,
    server: {
      ...server,
      listen: listen(server.listen),
      ...(server.tls === undefined ? {} : { tls: { cert_file: at(server.tls.cert_file), key_file: at(server.tls.key_file) } }),
    },
    registry: {
      ...registry,
      listen: listen(registry.listen),
      archive_dir: optional(registry.archive_dir),
      signing_key_file: optional(registry.signing_key_file),
    },
    storage: { ...storage, data_dir: at(storage.data_dir) },
    licence: {
      ...(licence.file === undefined ? {} : { file: at(licence.file) }),
      ...(licence.public_key_file === undefined ? {} : { public_key_file: at(licence.public_key_file) }),
    },
    compliance: { ...config.compliance, packs_dir: optional(config.compliance.packs_dir) },
    backup: {
      ...config.backup,
      signing_key_file: optional(config.backup.signing_key_file),
      import_dirs: config.backup.import_dirs.map(at),
      dir: optional(config.backup.dir),
    },
    audit: {
      ...config.audit,
      checkpoints: {
        ...config.audit.checkpoints,
        sink: optional(config.audit.checkpoints.sink),
        signing_key_file: optional(config.audit.checkpoints.signing_key_file),
      },
    },
  };
}
