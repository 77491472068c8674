/**
 * One line of standard input, for a secret: on a terminal the prompt goes to stderr and the
 * typed characters are not echoed; from a pipe (`printf %s "$KEY" | ...`) the first line is read
 * without a prompt. Only the CLI entry point calls this (STYLE §4: only main touches process).
 */
export async function readSecretLine(stdin: NodeJS.ReadStream, stderr: NodeJS.WriteStream, prompt: string): Promise<string> {
  if (stdin.isTTY) return readFromTerminal(stdin, stderr, prompt);
  let text = '';
  stdin.setEncoding('utf8');
  for await (const chunk of stdin) {
    text += String(chunk);
    if (text.includes('\n')) break;
  }
  return text.split(/\r?\n/)[0] ?? '';
}

function readFromTerminal(stdin: NodeJS.ReadStream, stderr: NodeJS.WriteStream, prompt: string): Promise<string> {
  stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.resume();
  return new Promise((resolve, reject) => {
    let text = '';
    const done = (error?: Error) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      stderr.write('\n');
      if (error === undefined) resolve(text);
      else reject(error);
    };
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n' || char === '\u0004') return done();
        if (char === '\u0003') return done(new Error('cancelled'));
        if (char === '\u007f' || char === '\b') text = text.slice(0, -1);
        else text += char;
      }
    };
    stdin.on('data', onData);
  });
}
