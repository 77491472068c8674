import { describe, expect, it } from 'vitest';
import { databaseNameFromUrl, redactMongoUrl, redactSecrets } from './mongo-url.ts';

describe('mongodb connection strings', () => {
  it('takes the database from the URL path, else agent_platform', () => {
    expect(databaseNameFromUrl('mongodb://127.0.0.1:27017/agent_platform')).toBe('agent_platform');
    expect(databaseNameFromUrl('mongodb://u:p@h1:27017,h2:27018/tenant_a?replicaSet=rs0')).toBe('tenant_a');
    expect(databaseNameFromUrl('mongodb+srv://u:p@cluster.example.net/prod?retryWrites=true')).toBe('prod');
    expect(databaseNameFromUrl('mongodb://h/my%2Ddb')).toBe('my-db');
    expect(databaseNameFromUrl('mongodb://127.0.0.1:27017')).toBe('agent_platform');
    expect(databaseNameFromUrl('mongodb://127.0.0.1:27017/')).toBe('agent_platform');
    expect(databaseNameFromUrl('mongodb://127.0.0.1:27017/?authSource=admin')).toBe('agent_platform');
  });

  it('replaces the password with *** and keeps user, hosts, path and options', () => {
    expect(redactMongoUrl('mongodb://ap:s3cret@h1:1,h2:2/db?replicaSet=rs0')).toBe(
      'mongodb://ap:***@h1:1,h2:2/db?replicaSet=rs0',
    );
    expect(redactMongoUrl('mongodb+srv://ap:p%40ss@cluster.example.net')).toBe(
      'mongodb+srv://ap:***@cluster.example.net',
    );
    // An unescaped '@' in the password (refused by the driver) must not leak its tail either.
    expect(redactMongoUrl('mongodb://ap:pa@ss@host/db')).toBe('mongodb://ap:***@host/db');
    expect(redactMongoUrl('mongodb://ap@host/db')).toBe('mongodb://ap@host/db');
    expect(redactMongoUrl('mongodb://host/db')).toBe('mongodb://host/db');
    expect(redactMongoUrl('postgres://u:pw@host')).toBe('<unparseable connection string>');
  });

  it('removes the URL and both spellings of its password from any text', () => {
    const url = 'mongodb://ap:p%40ss%2Fw0rd@db.internal:27017/agent_platform';
    const text = `failed: ${url} (user ap, password p@ss/w0rd, raw p%40ss%2Fw0rd)`;
    const redacted = redactSecrets(text, url);
    expect(redacted).toBe(
      'failed: mongodb://ap:***@db.internal:27017/agent_platform (user ap, password ***, raw ***)',
    );
    expect(redactSecrets('no secrets here', 'mongodb://host/db')).toBe('no secrets here');
  });
});
