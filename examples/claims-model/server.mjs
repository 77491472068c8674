#!/usr/bin/env node
// A stand-in for a paid model: a tiny server speaking the OpenAI chat-completions protocol that
// handles a reported loss the way a real model given the claims-handling competency would. It
// looks the policy number in the message up with lookup_policy, opens a claim with open_claim if
// the policy is active, then answers with the claim number. No tools offered: it says so.
//
//   node examples/claims-model/server.mjs [--port 4320]      base_url http://127.0.0.1:4320/v1
import { createServer } from 'node:http';

const at = process.argv.indexOf('--port');
const port = Number(at >= 0 ? process.argv[at + 1] : 4320);
let ids = 0;

function decide(messages, tools) {
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  const message = String(messages[lastUser]?.content ?? '');
  const results = messages.slice(lastUser + 1).filter((m) => m.role === 'tool').map((m) => m.content);
  const offered = new Set((tools ?? []).map((t) => t.function?.name));
  const policy = /\b[A-Z]{2}-\d{3,}\b/.exec(message)?.[0];
  if (!offered.has('lookup_policy') || !offered.has('open_claim')) return { text: 'I have no claims tools, so I cannot open a claim.' };
  if (policy === undefined) return { text: 'Which policy number is the loss under?' };
  if (results.length === 0) return { call: 'lookup_policy', args: { policy_number: policy } };
  const found = parse(results[0]);
  if (found?.status !== 'active') return { text: `I could not open a claim: ${results[0]}` };
  if (results.length === 1) return { call: 'open_claim', args: { policy_number: policy, description: message } };
  const claim = parse(results[1]);
  if (claim?.claim_no === undefined) return { text: `The claims system did not open the claim: ${results[1]}` };
  return { text: `Policy ${policy} (${found.holder_name}, ${found.product}) is active. I opened claim ${claim.claim_no} for you.` };
}

function parse(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
      return;
    }
    const request = JSON.parse(body);
    const next = decide(request.messages ?? [], request.tools);
    const message =
      next.call === undefined
        ? { role: 'assistant', content: next.text }
        : { role: 'assistant', content: null, tool_calls: [{ id: `call_${++ids}`, type: 'function', function: { name: next.call, arguments: JSON.stringify(next.args) } }] };
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: `chatcmpl-${ids}`,
        object: 'chat.completion',
        model: request.model,
        choices: [{ index: 0, message, finish_reason: next.call === undefined ? 'stop' : 'tool_calls' }],
        usage: { prompt_tokens: Math.ceil(body.length / 4), completion_tokens: 20, total_tokens: Math.ceil(body.length / 4) + 20 },
      }),
    );
  });
}).listen(port, '127.0.0.1', () => process.stdout.write(`claims model stand-in on http://127.0.0.1:${port}/v1\n`));
