import { describe, expect, it } from 'vitest';
import { answerPattern, curlRequest, heredocText, sectionCommands, shellWords } from './readme-shell.ts';

// The README runner is only as good as its reading of the README: answers must match what they
// say and nothing else, and shell it does not understand must fail rather than run differently.
describe('readme-shell', () => {
  const block = [
    'Prose is ignored.',
    '```sh',
    'R=http://127.0.0.1:4210',
    '# a comment',
    "curl -s -X POST $R/keys -H 'content-type: application/json' \\",
    `  -d '{"name":"a"}'`,
    '# => 201 {"id":"...","name":"a",',
    '#     "secret":"reg_sk_..."}',
    '# not part of the answer',
    'cat > x.toml <<TOML',
    'url = "$R"',
    'TOML',
    '```',
    '```toml',
    'not = "a command"',
    '```',
  ];

  it('reads commands, continuation lines, answers and heredocs from sh blocks only', () => {
    const commands = sectionCommands(block, 10);
    expect(commands.map((c) => [c.line, c.text])).toEqual([
      [12, 'R=http://127.0.0.1:4210'],
      [14, `curl -s -X POST $R/keys -H 'content-type: application/json' \n  -d '{"name":"a"}'`],
      [19, 'cat > x.toml <<TOML'],
    ]);
    expect(commands[1]!.answer).toBe('201 {"id":"...","name":"a",\n"secret":"reg_sk_..."}');
    expect(commands[2]!.heredoc).toEqual({ body: 'url = "$R"\n', expand: true });
    expect(heredocText(commands[2]!.heredoc!, { R: 'http://r' })).toBe('url = "http://r"\n');
  });

  it('splits words as bash does, expanding known variables only', () => {
    const vars = { H: 'Authorization: Bearer k', R: 'http://r', E: '' };
    expect(shellWords(`curl -s -H "$H" "$R/search?q=a&b=c" -d '{"x":"$R"}' # note`, vars)).toEqual([
      ['curl', '-s', '-H', 'Authorization: Bearer k', 'http://r/search?q=a&b=c', '-d', '{"x":"$R"}'],
    ]);
    expect(shellWords('printf %s "$R" | npm run cli -- x', vars)).toEqual([['printf', '%s', 'http://r'], ['npm', 'run', 'cli', '--', 'x']]);
    expect(shellWords('echo -H $H', vars)).toEqual([['echo', '-H', 'Authorization:', 'Bearer', 'k']]);
    expect(shellWords(`echo "" '' "\\"q\\""`, vars)).toEqual([['echo', '', '', '"q"']]);
    expect(() => shellWords('echo $NOPE', vars)).toThrow(/\$NOPE is not set/);
    expect(() => shellWords('echo $(date)', vars)).toThrow(/unsupported/);
    expect(() => shellWords('a && b', vars)).toThrow(/unsupported/);
    expect(() => shellWords('curl $R/search?q=x', vars)).toThrow(/unsupported/);
  });

  it('turns a curl command into the request it sends', () => {
    expect(curlRequest(['curl', '-s', '-H', 'Authorization: Bearer k', '-X', 'POST', 'http://r/x', '-H', 'content-type: application/json', '-d', '{}'])).toEqual({
      method: 'POST',
      url: 'http://r/x',
      headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(curlRequest(['curl', 'http://r/y'])).toMatchObject({ method: 'GET', body: undefined });
    expect(curlRequest(['curl', '-s', '-o', 'report.pdf', 'http://r/z'])).toEqual({ method: 'GET', url: 'http://r/z', headers: {}, body: undefined, output: 'report.pdf' });
    expect(() => curlRequest(['curl', '-F', 'a=b', 'http://r'])).toThrow(/not understood/);
    // A token request: -u is Basic authentication, several -d are one form body joined by '&'.
    expect(curlRequest(['curl', '-s', '-u', 'app:s3:cret', '-d', 'grant_type=client_credentials', '-d', 'resource=http://a', 'http://idp/token'])).toEqual({
      method: 'POST',
      url: 'http://idp/token',
      headers: { authorization: `Basic ${Buffer.from('app:s3:cret').toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&resource=http://a',
    });
    expect(() => curlRequest(['curl', '-u', 'app', 'http://idp/token'])).toThrow(/prompt for the password/);
  });

  it('matches an answer with ... and <placeholders> as anything, whitespace as any whitespace, the rest exactly', () => {
    const { status, pattern } = answerPattern('201 {"id":"<agent id>","state":"Running",...}');
    expect(status).toBe(201);
    expect(pattern.test('{"id":"9f1","state":"Running","uptime":3}')).toBe(true);
    expect(pattern.test('{"id":"9f1","state":"Suspended","uptime":3}')).toBe(false);
    expect(pattern.test('x{"id":"9f1","state":"Running"}')).toBe(false);
    const table = answerPattern('NAME  TYPE\n   a     skill\n   1 package').pattern;
    expect(table.test('NAME TYPE\na    skill\n1 package')).toBe(true);
    expect(table.test('NAME TYPE\na    skill\n2 packages')).toBe(false);
    expect(answerPattern('sha256:281dc5ed...').pattern.test('sha256:281dc5edff')).toBe(true);
    expect(answerPattern('sha256:281dc5ed...').pattern.test('sha256:181dc5edff')).toBe(false);
  });
});
