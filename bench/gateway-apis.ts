// What `bench gateway --api chat|responses|messages` sends through the gateway: each API's call as its official
// client sends it (openai-node's chat.completions.create and responses.create, @anthropic-ai/sdk's
// messages.create: the path, the JSON body, the headers beyond content-type). The upstream alone is always asked
// on chat completions, which is what the gateway itself asks it.
export const GATEWAY_APIS = ['chat', 'responses', 'messages'] as const;
export type GatewayApi = (typeof GATEWAY_APIS)[number];

export interface ApiCall {
  readonly path: string;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
}

const QUESTION = 'Where is the goal?';

const CALLS: Readonly<Record<GatewayApi, ApiCall>> = {
  chat: {
    path: '/v1/chat/completions',
    body: JSON.stringify({ model: 'stub', messages: [{ role: 'user', content: QUESTION }], max_tokens: 4 }),
    headers: { authorization: 'Bearer unused-on-loopback' },
  },
  responses: {
    path: '/v1/responses',
    body: JSON.stringify({ model: 'stub', input: QUESTION, max_output_tokens: 16 }),
    headers: { authorization: 'Bearer unused-on-loopback' },
  },
  messages: {
    path: '/v1/messages',
    body: JSON.stringify({ model: 'stub', max_tokens: 16, messages: [{ role: 'user', content: QUESTION }] }),
    headers: { 'x-api-key': 'unused-on-loopback', 'anthropic-version': '2023-06-01' },
  },
};

/** The `--api` flag's value (default chat); anything else is refused with the choices. */
export function gatewayApiOf(args: readonly string[]): GatewayApi {
  const at = args.indexOf('--api');
  if (at < 0) return 'chat';
  const value = args[at + 1] ?? '';
  if (!(GATEWAY_APIS as readonly string[]).includes(value)) throw new Error(`--api must be one of ${GATEWAY_APIS.join(', ')}, got '${value}'`);
  return value as GatewayApi;
}

export function apiCall(api: GatewayApi): ApiCall {
  return CALLS[api];
}
