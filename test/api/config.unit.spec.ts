// The API config: defaults, environment, overrides, and a ConfigError that says how to fix each bad value.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../core/errors.js';
import { checkExposure, defaultApiConfig, isLoopback, loadApiConfig } from '../../api/config.js';

const TOKEN = 'a'.repeat(32);

test('with nothing set, the defaults: loopback, port 18080, no tokens, 1 MiB bodies', () => {
  assert.deepEqual(loadApiConfig({}, {}), defaultApiConfig);
  assert.equal(defaultApiConfig.host, '127.0.0.1');
  assert.equal(defaultApiConfig.maxBodyBytes, 1024 * 1024);
});

test('the environment sets every field; overrides win over it', () => {
  const env = {
    TRAJFLOW_DASHBOARD_HOST: '0.0.0.0',
    TRAJFLOW_DASHBOARD_PORT: '40000',
    TRAJFLOW_DASHBOARD_TOKENS: `${TOKEN}, ${'b'.repeat(20)}`,
    TRAJFLOW_DASHBOARD_MAX_BODY_BYTES: '2048',
    TRAJFLOW_DASHBOARD_MAX_STEPS_PER_REQUEST: '10',
    TRAJFLOW_DASHBOARD_RATE_STEPS_PER_SECOND: '2.5',
    TRAJFLOW_DASHBOARD_RATE_BURST: '20',
    TRAJFLOW_DASHBOARD_PUBLISH_TIMEOUT_MS: '500',
    TRAJFLOW_DASHBOARD_MAX_EVENT_STREAMS: '10',
    TRAJFLOW_DASHBOARD_MAX_EVENT_STREAMS_PER_CLIENT: '2',
    TRAJFLOW_DASHBOARD_ALLOWED_HOSTS: 'dash.example.com, dash.example.com:8443',
  };
  assert.deepEqual(loadApiConfig({}, env), {
    host: '0.0.0.0',
    port: 40000,
    tokens: [TOKEN, 'b'.repeat(20)],
    maxBodyBytes: 2048,
    maxStepsPerRequest: 10,
    rateLimit: { stepsPerSecond: 2.5, burst: 20 },
    publishTimeoutMs: 500,
    maxEventStreams: 10,
    maxEventStreamsPerClient: 2,
    allowedHosts: ['dash.example.com', 'dash.example.com:8443'],
  });
  const overridden = loadApiConfig({ host: '127.0.0.1', port: 0, rateLimit: { burst: 30 } }, env);
  assert.equal(overridden.host, '127.0.0.1');
  assert.equal(overridden.port, 0);
  assert.deepEqual(overridden.rateLimit, { stepsPerSecond: 2.5, burst: 30 });
});

test('the event stream limits: 32 in all and 8 per client by default; a smaller total lowers the per-client default', () => {
  assert.equal(defaultApiConfig.maxEventStreams, 32);
  assert.equal(defaultApiConfig.maxEventStreamsPerClient, 8);
  assert.deepEqual(
    (({ maxEventStreams, maxEventStreamsPerClient }) => ({ maxEventStreams, maxEventStreamsPerClient }))(loadApiConfig({}, { TRAJFLOW_DASHBOARD_MAX_EVENT_STREAMS: '4' })),
    { maxEventStreams: 4, maxEventStreamsPerClient: 4 },
  );
});

test('the Host check is on by default on loopback (loopback names only) and off beyond it; * turns it off', () => {
  assert.deepEqual(loadApiConfig({}, {}).allowedHosts, []);
  assert.deepEqual(loadApiConfig({ host: 'localhost' }, {}).allowedHosts, []);
  assert.equal(loadApiConfig({ host: '0.0.0.0', tokens: [TOKEN] }, {}).allowedHosts, null);
  assert.equal(loadApiConfig({}, { TRAJFLOW_DASHBOARD_ALLOWED_HOSTS: '*' }).allowedHosts, null);
  assert.deepEqual(loadApiConfig({ host: '0.0.0.0' }, { TRAJFLOW_DASHBOARD_ALLOWED_HOSTS: 'dash.internal' }).allowedHosts, ['dash.internal']);
  assert.deepEqual(loadApiConfig({ allowedHosts: ['[::1]:9000'] }, { TRAJFLOW_DASHBOARD_ALLOWED_HOSTS: '*' }).allowedHosts, ['[::1]:9000'], 'an override wins');
});

test('a larger batch size raises the default burst with it', () => {
  assert.equal(loadApiConfig({ maxStepsPerRequest: 5000 }, {}).rateLimit.burst, 5000);
});

const bad: Array<[string, Record<string, string>, RegExp]> = [
  ['a port that is not a number', { TRAJFLOW_DASHBOARD_PORT: 'http' }, /TRAJFLOW_DASHBOARD_PORT='http' is not a number/],
  ['a port out of range', { TRAJFLOW_DASHBOARD_PORT: '70000' }, /between 0 and 65535/],
  ['a short token', { TRAJFLOW_DASHBOARD_TOKENS: 'secret' }, /at least 16 characters.*openssl rand/],
  ['a token with a space', { TRAJFLOW_DASHBOARD_TOKENS: 'abcdefgh ijklmnopq' }, /token 1 is not usable/],
  ['the same token twice', { TRAJFLOW_DASHBOARD_TOKENS: `${TOKEN},${TOKEN}` }, /same token twice/],
  ['a tiny body limit', { TRAJFLOW_DASHBOARD_MAX_BODY_BYTES: '10' }, /between 1024 and/],
  ['a zero rate', { TRAJFLOW_DASHBOARD_RATE_STEPS_PER_SECOND: '0' }, /rate above 0/],
  ['a burst below the batch size', { TRAJFLOW_DASHBOARD_RATE_BURST: '10', TRAJFLOW_DASHBOARD_MAX_STEPS_PER_REQUEST: '100' }, /could never pass the rate limit/],
  ['a host with a path', { TRAJFLOW_DASHBOARD_HOST: 'example.com/x' }, /not a host name or IP address.*--host/],
  ['no event streams', { TRAJFLOW_DASHBOARD_MAX_EVENT_STREAMS: '0' }, /TRAJFLOW_DASHBOARD_MAX_EVENT_STREAMS is 0/],
  [
    'an allowed host with a scheme',
    { TRAJFLOW_DASHBOARD_ALLOWED_HOSTS: 'dash.example.com,http://x.example' },
    /TRAJFLOW_DASHBOARD_ALLOWED_HOSTS: 'http:\/\/x\.example' is not a host name.*'\*'/,
  ],
  [
    'more streams per client than in all',
    { TRAJFLOW_DASHBOARD_MAX_EVENT_STREAMS: '4', TRAJFLOW_DASHBOARD_MAX_EVENT_STREAMS_PER_CLIENT: '5' },
    /one client could still take every stream/,
  ],
];

for (const [what, env, message] of bad) {
  test(`${what} is a ConfigError that says what to change`, () => {
    assert.throws(
      () => loadApiConfig({}, env),
      (error: unknown) => error instanceof ConfigError && message.test(error.message),
    );
  });
}

test('loopback means 127.0.0.0/8, ::1 and localhost; nothing else', () => {
  for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', 'LOCALHOST']) assert.equal(isLoopback(host), true, host);
  for (const host of ['0.0.0.0', '::', '10.0.0.1', 'example.com', '128.0.0.1', 'localhost.example.com']) assert.equal(isLoopback(host), false, host);
});

test('serving beyond loopback without a token is refused, with a message that says how to fix it', () => {
  assert.throws(
    () => checkExposure({ host: '0.0.0.0', tokens: [] }),
    (error: unknown) => error instanceof ConfigError && /TRAJFLOW_DASHBOARD_TOKENS.*127\.0\.0\.1/.test(error.message),
  );
  assert.doesNotThrow(() => checkExposure({ host: '0.0.0.0', tokens: [TOKEN] }));
  assert.doesNotThrow(() => checkExposure({ host: '127.0.0.1', tokens: [] }));
});
