import { describe, expect, it } from 'vitest';
import { isSecretKeyName, REDACTED, redactConfigText } from './redact.ts';

const R = REDACTED;

describe('redactConfigText', () => {
  it('uses the spec placeholder of 8 bullets', () => {
    expect(R).toBe('••••••••');
  });

  it('keeps a file without secrets byte for byte', () => {
    const text = [
      '# Agent Platform',
      '[server]  # the api',
      'listen = "127.0.0.1:4200"',
      "allowed_ips = [ '10.0.0.0/8',  # office",
      '  "fd00::/8", ]',
      'when = 1979-05-27 07:32:00Z',
      'inline = { a = 1, b = [true, false] }',
      'text = """',
      'multi "quoted" line',
      '"""',
      '[[providers]]',
      'id = "oa"',
      'api_key_env = "OPENAI_API_KEY"',
      '',
    ].join('\n');
    expect(redactConfigText(text)).toBe(text);
  });

  it.each([
    ['password = "hunter2"', `password = "${R}"`],
    ['db_PASSWORD = "hunter2"', `db_PASSWORD = "${R}"`],
    ['passwd = "hunter2"', `passwd = "${R}"`],
    ['client_secret = \'hunter2\'', `client_secret = '${R}'`],
    ['auth_token="hunter2"', `auth_token="${R}"`],
    ['OPENAI_API_KEY = "hunter2"', `OPENAI_API_KEY = "${R}"`],
    ['apikey = "hunter2"', `apikey = "${R}"`],
    ['api-key = "hunter2"', `api-key = "${R}"`],
    ['private_key = "hunter2"', `private_key = "${R}"`],
    ['credentials = "hunter2"', `credentials = "${R}"`],
    ['"db.password" = "hunter2"', `"db.password" = "${R}"`],
    ['db . password = "hunter2"', `db . password = "${R}"`],
    ['token = 123456  # numeric', `token = "${R}"  # numeric`],
    ['token = true', `token = "${R}"`],
    ['secret = "a\\"b#c" # note', `secret = "${R}" # note`],
  ])('redacts %s', (input, expected) => {
    expect(redactConfigText(`${input}\n`)).toBe(`${expected}\n`);
  });

  it('keeps the names of environment variables (keys ending in _env)', () => {
    expect(isSecretKeyName('api_key_env')).toBe(false);
    expect(isSecretKeyName('api_key')).toBe(true);
    expect(redactConfigText('api_key_env = "OPENAI_API_KEY"')).toBe('api_key_env = "OPENAI_API_KEY"');
  });

  it('redacts multi-line strings whole and does not read their content as keys', () => {
    const text = [
      'private_key = """',
      '-----BEGIN PRIVATE KEY-----',
      'abc = "not a key"',
      '-----END PRIVATE KEY-----"""',
      "token = '''",
      "line ' with quotes ''",
      "'''",
      'note = """',
      'password = "inside a string, not a key"',
      'ends with quotes""""',
      'after = "visible"',
    ].join('\n');
    expect(redactConfigText(text)).toBe(
      [
        `private_key = """${R}"""`,
        `token = '''${R}'''`,
        'note = """',
        'password = "inside a string, not a key"',
        'ends with quotes""""',
        'after = "visible"',
      ].join('\n'),
    );
  });

  it('redacts every element of a secret array and every value of a secret inline table', () => {
    const text = 'tokens = [\n  "a1", # first\n  "b2",\n]\ncredentials = { user = "u1", nested = { pin = 42 } }\n';
    expect(redactConfigText(text)).toBe(
      `tokens = [\n  "${R}", # first\n  "${R}",\n]\ncredentials = { user = "${R}", nested = { pin = "${R}" } }\n`,
    );
  });

  it('redacts secret keys inside inline tables and arrays of inline tables', () => {
    const text = 'db = { host = "h", password = "p1" }\nlist = [{ name = "a", token = "t1" }, { name = "b" }]';
    expect(redactConfigText(text)).toBe(`db = { host = "h", password = "${R}" }\nlist = [{ name = "a", token = "${R}" }, { name = "b" }]`);
  });

  it('redacts every value of a table whose name looks secret, until the next table', () => {
    const text = '[secrets]\nfirst = "s1"\nsecond = 2\n[server]\nlisten = "127.0.0.1:1"\n[app.credentials]\nx = "s3"\n';
    expect(redactConfigText(text)).toBe(`[secrets]\nfirst = "${R}"\nsecond = "${R}"\n[server]\nlisten = "127.0.0.1:1"\n[app.credentials]\nx = "${R}"\n`);
  });

  it('redacts URL passwords in any value, array or inline table, keeping user and host', () => {
    const text = [
      'redis_url = "redis://user:pw1@127.0.0.1:6379/0"',
      "mongodb_url = 'mongodb://:pw2@db.example/agent_platform'",
      "postgres_url = 'postgres://ap:pw6@db1.example/agent_platform,postgres://ap@db2.example/agent_platform?sslmode=require&password=pw7'",
      'urls = ["nats://a:pw3@h:4222", "http://plain.example/a@b"]',
      'conn = { url = "amqp://guest:pw4@mq" }',
      'nouser = "postgres://user@h/db"',
    ].join('\n');
    const out = redactConfigText(text);
    expect(out).toBe(
      [
        `redis_url = "redis://user:${R}@127.0.0.1:6379/0"`,
        `mongodb_url = 'mongodb://:${R}@db.example/agent_platform'`,
        `postgres_url = 'postgres://ap:${R}@db1.example/agent_platform,postgres://ap@db2.example/agent_platform?sslmode=require&password=${R}'`,
        `urls = ["nats://a:${R}@h:4222", "http://plain.example/a@b"]`,
        `conn = { url = "amqp://guest:${R}@mq" }`,
        'nouser = "postgres://user@h/db"',
      ].join('\n'),
    );
  });

  it('redacts secrets in comments: commented-out assignments and URL passwords', () => {
    const text = '# password = "old-one"\n#api_key="k2"\n# was redis://u:pw5@h\n# a plain comment = fine\n';
    expect(redactConfigText(text)).toBe(`# password = "${R}"\n#api_key="${R}"\n# was redis://u:${R}@h\n# a plain comment = fine\n`);
  });

  it('handles CRLF line endings', () => {
    expect(redactConfigText('[a]\r\ntoken = "t"\r\nx = 1\r\n')).toBe(`[a]\r\ntoken = "${R}"\r\nx = 1\r\n`);
  });

  it('leaves no secret value anywhere in a realistic file', () => {
    const secrets = ['S1-top', 'S2-url', 'S3-multi', 'S4-array', 'S5-inline', 'S6-comment'];
    const text = [
      '[server]',
      'listen = "0.0.0.0:4200"',
      '[runtime]',
      'redis_url = "redis://app:S2-url@redis:6379"',
      '[connectors]',
      'urls = { crm = "https://crm.example/health" }',
      '[auth.oidc]',
      'client_secret = "S1-top"',
      'signing_private_key = """',
      'S3-multi',
      '"""',
      'extra_tokens = ["S4-array"]',
      'service_credentials = { id = "S5-inline" }',
      '# token = S6-comment',
    ].join('\n');
    const out = redactConfigText(text);
    for (const secret of secrets) expect(out).not.toContain(secret);
    expect(out).toContain('https://crm.example/health');
  });
});
