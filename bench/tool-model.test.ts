import { describe, expect, it } from 'vitest';
import { callToolMessage, toolAnswer, toolModelReply } from './tool-model.ts';

const ask = callToolMessage('bench 7', 'write_record', { id: 'r-1', note: 'a { brace }' });

describe('toolModelReply (the model stand-in of the tool-call journal targets)', () => {
  it('asks for the named tool with the arguments of the message, once', () => {
    expect(
      toolModelReply([
        { role: 'system', content: 'You are...' },
        { role: 'user', content: ask },
      ]),
    ).toEqual({
      tool_calls: [{ name: 'write_record', arguments: { id: 'r-1', note: 'a { brace }' } }],
    });
  });

  it('answers with the tool result once the tool answered', () => {
    const reply = toolModelReply([
      { role: 'user', content: ask },
      { role: 'assistant', content: null },
      { role: 'tool', content: '{"ok":true}' },
    ]);
    expect(reply).toEqual({ text: toolAnswer('write_record', '{"ok":true}') });
    expect(reply).toEqual({ text: 'write_record said: {"ok":true}' });
  });

  it('leaves any other message to the echo, whatever the session history holds', () => {
    expect(
      toolModelReply([{ role: 'user', content: 'Water damage in the kitchen, policy HO-1234' }]),
    ).toBeNull();
    expect(toolModelReply([])).toBeNull();
    const history = [
      { role: 'user', content: ask },
      { role: 'assistant', content: null },
      { role: 'tool', content: '{"ok":true}' },
      { role: 'assistant', content: 'write_record said: {"ok":true}' },
    ];
    expect(
      toolModelReply([...history, { role: 'user', content: 'bench 8: answer without tools' }]),
    ).toBeNull();
    // A new request after an answered one asks again: the results of earlier turns do not count.
    expect(
      toolModelReply([...history, { role: 'user', content: callToolMessage('bench 9', 'read_record', {}) }]),
    ).toEqual({
      tool_calls: [{ name: 'read_record', arguments: {} }],
    });
  });
});
