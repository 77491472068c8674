import { describe, expect, it } from 'vitest';
import { freePort } from './free-port.ts';

describe('freePort', () => {
  it('never hands out the same port twice in a process, though the OS may choose a released one again', async () => {
    const ports: number[] = [];
    for (let i = 0; i < 300; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
  });
});
