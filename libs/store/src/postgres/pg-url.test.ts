import { describe, expect, it } from 'vitest';
import { userInfo } from 'node:os';
import { connectionUrl, redactPostgresUrl, secretRedactor } from './pg-url.ts';

describe('postgres connection strings', () => {
  it('redacts the userinfo password and a password query parameter, keeping user and host', () => {
    expect(redactPostgresUrl('postgres://ap:s3cr%40t@db.example:5432/agent_platform?sslmode=verify-full')).toBe(
      'postgres://ap:***@db.example:5432/agent_platform?sslmode=verify-full',
    );
    expect(redactPostgresUrl('postgresql://ap@db/x?sslmode=require&password=pw2')).toBe('postgresql://ap@db/x?sslmode=require&password=***');
    expect(redactPostgresUrl('postgres://db/x')).toBe('postgres://db/x');
  });

  it('removes every URL and every spelling of the passwords from a text', () => {
    const redact = secretRedactor(['postgres://ap:s3cr%40t@db/x', 'postgres://ap@db2/x?password=qpw'], 'given pw');
    const text = 'fail postgres://ap:s3cr%40t@db/x: s3cr@t; qpw; given pw; given%20pw';
    expect(redact(text)).toBe('fail postgres://ap:***@db/x: ***; ***; ***; ***');
  });

  it('connects as the operating system user when the URL names none, as psql does, and puts a given password in the URL', () => {
    const me = encodeURIComponent(userInfo().username);
    expect(connectionUrl('postgres://127.0.0.1:5432/agent_platform', undefined)).toBe(`postgres://${me}@127.0.0.1:5432/agent_platform`);
    expect(connectionUrl('postgres://ap@db/x', undefined)).toBe('postgres://ap@db/x');
    expect(connectionUrl('postgres://db/x?user=svc', undefined)).toBe('postgres://db/x?user=svc');
    expect(connectionUrl('postgres://ap:old@db/x?password=q', 'n3w pw')).toBe('postgres://ap:n3w%20pw@db/x');
  });
});
