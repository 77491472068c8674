import { describe, expect, it } from 'vitest';
import { algorithmProblems } from './algorithms.ts';
import { endpointUrlProblem } from './endpoint-url.ts';

describe('issuer and JWKS URLs', () => {
  it.each(['https://login.example.com', 'https://idp.example.com/realms/acme', 'http://127.0.0.1:8080', 'http://localhost:9000/x', 'http://[::1]:80'])('accepts %s', (url) => {
    expect(endpointUrlProblem(url)).toBeNull();
  });

  it.each([
    ['http://login.example.com', 'https'],
    ['http://10.0.0.5', 'https'],
    ['http://127.0.0.1.evil.example', 'https'],
    ['ftp://example.com', 'https URL'],
    ['file:///etc/passwd', 'https URL'],
    ['https://user:pw@example.com', 'credentials'],
    ['not a url', 'not a URL'],
  ])('refuses %s', (url, why) => {
    expect(endpointUrlProblem(url)).toContain(why);
  });
});

describe('allowed algorithms', () => {
  it('takes the asymmetric ones and says why it refuses the rest', () => {
    expect(algorithmProblems(['RS256', 'PS512', 'ES384', 'EdDSA'])).toEqual([]);
    expect(algorithmProblems(['none'])[0]).toContain('never allowed');
    expect(algorithmProblems(['HS256'])[0]).toContain('HMAC');
    expect(algorithmProblems(['RS1'])[0]).toContain('unknown algorithm');
    expect(algorithmProblems([])[0]).toContain('at least one');
    expect(algorithmProblems(['RS256', 'RS256'])[0]).toContain('twice');
  });
});
