import { describe, expect, it } from 'vitest';
import { toWinAnsi } from './win-ansi.ts';

describe('toWinAnsi', () => {
  it('keeps what the standard PDF fonts can show: Latin-1 and the cp1252 extras', () => {
    const text = 'Bulletin §3 ¶17 – “quoted” café Zürich 5 € … • ©';
    expect(toWinAnsi(text)).toBe(text);
  });

  it('replaces symbols by look-alikes, strips accents the fonts lack, and marks the rest', () => {
    expect(toWinAnsi('oldest ≥ 183 days → ok')).toBe('oldest >= 183 days -> ok');
    expect(toWinAnsi('Łódź Kraków Ostrava Dvořák')).toBe('?ódz Kraków Ostrava Dvorák');
    expect(toWinAnsi('保险 ok')).toBe('?? ok');
    expect(toWinAnsi('tab\there\r\nline')).toBe('tab here \nline');
  });
});
