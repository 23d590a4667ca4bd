// The upstream of `trajflow bench gateway`: an OpenAI-compatible server process that answers at once, in vLLM's
// response shape with token ids and log-probs (logprobs.content tokens "token_id:<id>", token_ids,
// prompt_token_ids), so the bench measures what the gateway adds, not a model. Prints "listening <port>".
import { createServer } from 'node:http';

const content = [101, 102, 103, 104].map((id, i) => ({ token: `token_id:${id}`, logprob: Math.fround(-0.25 * (i + 1)), bytes: [id], top_logprobs: [] }));
const server = createServer((req, res) => {
  let raw = '';
  req.on('data', (chunk) => (raw += chunk));
  req.on('end', () => {
    const body = raw === '' ? {} : JSON.parse(raw);
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        id: 'chatcmpl-stub',
        object: 'chat.completion',
        created: 0,
        model: body.model ?? 'stub',
        choices: [{ index: 0, message: { role: 'assistant', content: 'abcd' }, logprobs: { content }, finish_reason: 'stop', token_ids: [101, 102, 103, 104] }],
        prompt_token_ids: [1, 2, 3, 4, 5, 6, 7, 8],
        usage: { prompt_tokens: 8, completion_tokens: 4, total_tokens: 12 },
      }),
    );
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
