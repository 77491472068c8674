import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * A self-signed P-256 certificate for 127.0.0.1, valid one day, written by Debian's openssl as
 * `cert.pem` and `key.pem` in `dir` (TLS tests of a platform on loopback).
 */
export function selfSignedCert(dir: string): { cert_file: string; key_file: string } {
  const cert_file = join(dir, 'cert.pem');
  const key_file = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key_file, '-out', cert_file, '-days', '1', '-subj', '/CN=127.0.0.1'],
    { stdio: 'ignore' },
  );
  return { cert_file, key_file };
}
