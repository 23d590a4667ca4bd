// Unit: the Kafka SASL/TLS and ClickHouse login settings, read from the environment and the config file, checked
// with messages that name the setting; secrets never printed (JSON, util.inspect, String, messages).
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { inspect } from 'node:util';
import { loadConfig } from '../../core/config.js';
import { Secret } from '../../core/credentials.js';
import { ConfigError } from '../../core/errors.js';
import { clickHouseAuthHeaders, explainRefusedLogin, explainTlsFailure } from '../../infra/clickhouse/http.js';
import { withConfigFile } from '../../infra/cli/config-file.js';
import { explainAuthFailure, kafkajsSecurity } from '../../streams/kafka-auth.js';

const dir = mkdtempSync(join(tmpdir(), 'trajflow-credentials-'));
const external = { TRAJFLOW_KAFKA_BROKERS: 'kafka-1:9093,kafka-2:9093', TRAJFLOW_CLICKHOUSE_URL: 'https://ch.example:8443' };
const refused = (env: Record<string, string>, pattern: RegExp) =>
  assert.throws(
    () => loadConfig(env),
    (e: unknown) => e instanceof ConfigError && pattern.test(e.message),
  );

test('no security settings: a plaintext cluster and the default ClickHouse user, as before', () => {
  const config = loadConfig({});
  assert.deepEqual(config.kafka.security, {});
  assert.equal(config.clickhouse.credentials, undefined);
  assert.deepEqual(kafkajsSecurity(config.kafka), {});
  assert.deepEqual(clickHouseAuthHeaders(config.clickhouse.credentials), {});
});

test('SCRAM and TLS from the environment become kafkajs sasl and ssl options', () => {
  const ca = join(dir, 'ca.pem');
  writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n');
  const config = loadConfig({
    ...external,
    TRAJFLOW_KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512',
    TRAJFLOW_KAFKA_SASL_USERNAME: 'alice',
    TRAJFLOW_KAFKA_SASL_PASSWORD: 'p4ss-w0rd',
    TRAJFLOW_KAFKA_TLS_CA_FILE: ca,
  });
  assert.deepEqual(kafkajsSecurity(config.kafka), {
    ssl: { ca: '-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n' },
    sasl: { mechanism: 'scram-sha-512', username: 'alice', password: 'p4ss-w0rd' },
  });
  assert.deepEqual(kafkajsSecurity(loadConfig({ ...external, TRAJFLOW_KAFKA_TLS: '1' }).kafka), { ssl: {} });
});

test('a password from a _FILE drops one trailing newline and names the file variable', () => {
  const file = join(dir, 'password');
  writeFileSync(file, 's3cret\n');
  const config = loadConfig({ ...external, TRAJFLOW_KAFKA_SASL_MECHANISM: 'plain', TRAJFLOW_KAFKA_SASL_USERNAME: 'bob', TRAJFLOW_KAFKA_SASL_PASSWORD_FILE: file });
  assert.equal(config.kafka.security?.sasl?.password.reveal(), 's3cret');
  assert.equal(config.kafka.security?.sasl?.password.setting, 'TRAJFLOW_KAFKA_SASL_PASSWORD_FILE');
});

test('wrong or incomplete settings are refused with the setting named and the fix', () => {
  const sasl = { ...external, TRAJFLOW_KAFKA_SASL_MECHANISM: 'scram-sha-512', TRAJFLOW_KAFKA_SASL_USERNAME: 'alice', TRAJFLOW_KAFKA_SASL_PASSWORD: 'x' };
  refused({ ...sasl, TRAJFLOW_KAFKA_SASL_MECHANISM: 'GSSAPI' }, /TRAJFLOW_KAFKA_SASL_MECHANISM='GSSAPI' is not supported: use plain, scram-sha-256, scram-sha-512/);
  refused({ ...sasl, TRAJFLOW_KAFKA_SASL_USERNAME: '' }, /needs TRAJFLOW_KAFKA_SASL_USERNAME/);
  refused({ ...sasl, TRAJFLOW_KAFKA_SASL_PASSWORD: '' }, /needs a password: set TRAJFLOW_KAFKA_SASL_PASSWORD, or TRAJFLOW_KAFKA_SASL_PASSWORD_FILE/);
  refused({ ...sasl, TRAJFLOW_KAFKA_SASL_PASSWORD_FILE: join(dir, 'password') }, /TRAJFLOW_KAFKA_SASL_PASSWORD and TRAJFLOW_KAFKA_SASL_PASSWORD_FILE are both set/);
  refused({ ...external, TRAJFLOW_KAFKA_SASL_USERNAME: 'alice' }, /TRAJFLOW_KAFKA_SASL_USERNAME is set but TRAJFLOW_KAFKA_SASL_MECHANISM is not/);
  refused({ ...sasl, TRAJFLOW_KAFKA_BROKERS: '' }, /the broker trajflow starts has no authentication or TLS: set TRAJFLOW_KAFKA_BROKERS/);
  refused({ ...external, TRAJFLOW_KAFKA_TLS_CA_FILE: join(dir, 'missing.pem') }, /TRAJFLOW_KAFKA_TLS_CA_FILE=.*missing\.pem cannot be read \(ENOENT\)/);
  refused({ ...external, TRAJFLOW_KAFKA_TLS: 'yes' }, /TRAJFLOW_KAFKA_TLS='yes' must be 1/);
  refused({ ...external, TRAJFLOW_KAFKA_TLS_CERT_FILE: join(dir, 'password') }, /TRAJFLOW_KAFKA_TLS_CERT_FILE and TRAJFLOW_KAFKA_TLS_KEY_FILE go together/);
  refused({ TRAJFLOW_CLICKHOUSE_PASSWORD: 'x' }, /TRAJFLOW_CLICKHOUSE_PASSWORD is set but the ClickHouse trajflow starts.*set TRAJFLOW_CLICKHOUSE_URL/);
  refused({ ...external, TRAJFLOW_CLICKHOUSE_USER: "a'b" }, /TRAJFLOW_CLICKHOUSE_USER='a'b' is not a user name/);
});

test('a ClickHouse URL with a password in it is refused without printing the password', () => {
  assert.throws(
    () => loadConfig({ TRAJFLOW_CLICKHOUSE_URL: 'https://ann:hunter2@ch.example:8443' }),
    (e: unknown) => e instanceof ConfigError && /'https:\/\/\*\*\*@ch\.example:8443' holds a user or password/.test(e.message) && !e.message.includes('hunter2'),
  );
});

test('secrets print as [redacted] in JSON, util.inspect and strings; the config dump holds none', () => {
  const config = loadConfig({
    ...external,
    TRAJFLOW_KAFKA_SASL_MECHANISM: 'scram-sha-256',
    TRAJFLOW_KAFKA_SASL_USERNAME: 'alice',
    TRAJFLOW_KAFKA_SASL_PASSWORD: 'kafka-pw-123',
    TRAJFLOW_CLICKHOUSE_USER: 'ann',
    TRAJFLOW_CLICKHOUSE_PASSWORD: 'ch-pw-456',
  });
  for (const dump of [JSON.stringify(config), inspect(config, { depth: 10 }), `${config.kafka.security?.sasl?.password}`, inspect(config.clickhouse.credentials?.password)]) {
    assert.ok(!dump.includes('kafka-pw-123') && !dump.includes('ch-pw-456'), dump);
    assert.match(dump, /redacted/);
  }
  assert.equal(inspect(new Secret('x', 'TRAJFLOW_CLICKHOUSE_PASSWORD')), 'Secret([redacted] from TRAJFLOW_CLICKHOUSE_PASSWORD)');
});

test('the config file\'s "kafka" and "clickhouse" sections stand for the variables; the environment wins; files are relative to it', () => {
  writeFileSync(join(dir, 'ch-password'), 'from-file\n');
  const file = join(dir, 'trajflow.json');
  writeFileSync(
    file,
    JSON.stringify({
      kafka: { brokers: ['k1:9093', 'k2:9093'], saslMechanism: 'scram-sha-512', saslUsername: 'alice', saslPassword: 'file-pw', tls: true },
      clickhouse: { url: 'https://ch.example:8443', user: 'ann', passwordFile: 'ch-password' },
      train: { env: 'FrozenLake' },
    }),
  );
  const config = loadConfig({ TRAJFLOW_CONFIG: file, TRAJFLOW_KAFKA_SASL_USERNAME: 'bob' });
  assert.deepEqual(config.kafka.brokers, ['k1:9093', 'k2:9093']);
  assert.equal(config.kafka.security?.sasl?.username, 'bob');
  assert.equal(config.kafka.security?.sasl?.password.reveal(), 'file-pw');
  assert.match(config.kafka.security?.sasl?.password.setting ?? '', /^TRAJFLOW_KAFKA_SASL_PASSWORD \(set by config file .*trajflow\.json kafka\.saslPassword\)$/);
  assert.deepEqual(config.kafka.security?.tls, {});
  assert.equal(config.clickhouse.credentials?.user, 'ann');
  assert.equal(config.clickhouse.credentials?.password.reveal(), 'from-file');
  // The command sections still work beside the service sections.
  assert.deepEqual(withConfigFile('train', [], ['train', 'learner'], { TRAJFLOW_CONFIG: file }).args, ['--env', 'FrozenLake']);

  writeFileSync(file, JSON.stringify({ kafka: { saslMechanism: 'kerberos', brokers: 'k1:9093', saslUsername: 'a', saslPassword: 'b' } }));
  refused({ TRAJFLOW_CONFIG: file }, /TRAJFLOW_KAFKA_SASL_MECHANISM='kerberos' is not supported.*\(TRAJFLOW_KAFKA_SASL_MECHANISM was set by config file .* kafka\.saslMechanism\)/);
  writeFileSync(file, JSON.stringify({ kafka: { saslPasword: 'typo' } }));
  refused({ TRAJFLOW_CONFIG: file }, /"kafka\.saslPasword" is not a setting; use one of brokers, saslMechanism/);
});

test('a refused SASL login becomes a ConfigError naming the setting; other errors pass through', () => {
  const config = loadConfig({ ...external, TRAJFLOW_KAFKA_SASL_MECHANISM: 'scram-sha-512', TRAJFLOW_KAFKA_SASL_USERNAME: 'alice', TRAJFLOW_KAFKA_SASL_PASSWORD: 'pw-789' });
  const failure = Object.assign(new Error('SASL SCRAM SHA512 authentication failed: invalid credentials (pw-789)'), { name: 'KafkaJSSASLAuthenticationError' });
  const explained = explainAuthFailure(Object.assign(new Error('wrapped'), { originalError: failure }), config.kafka);
  assert.ok(explained instanceof ConfigError);
  assert.match(explained.message, /refused the SASL SCRAM-SHA-512 login of user 'alice'.*check TRAJFLOW_KAFKA_SASL_USERNAME and TRAJFLOW_KAFKA_SASL_PASSWORD\.$/);
  assert.ok(!explained.message.includes('pw-789'));
  const unsupported = Object.assign(new Error('SASL SCRAM-SHA-512 mechanism is not supported by the server'), { name: 'KafkaJSSASLAuthenticationError' });
  assert.match(explainAuthFailure(unsupported, config.kafka)?.message ?? '', /set TRAJFLOW_KAFKA_SASL_MECHANISM to one its listener enables/);
  assert.equal(explainAuthFailure(new Error('connection refused'), config.kafka), undefined);
});

test('an untrusted broker certificate becomes a ConfigError naming TRAJFLOW_KAFKA_TLS_CA_FILE', () => {
  const untrusted = Object.assign(new Error('Connection error: self-signed certificate in certificate chain'), { code: 'SELF_SIGNED_CERT_IN_CHAIN' });
  const retried = Object.assign(new Error('retries exceeded'), { cause: untrusted });
  const systemCas = loadConfig({ ...external, TRAJFLOW_KAFKA_TLS: '1' });
  assert.match(explainAuthFailure(retried, systemCas.kafka)?.message ?? '', /\(SELF_SIGNED_CERT_IN_CHAIN\): set TRAJFLOW_KAFKA_TLS_CA_FILE to the PEM file/);
  const withCa = loadConfig({ ...external, TRAJFLOW_KAFKA_TLS_CA_FILE: join(dir, 'ca.pem') });
  assert.match(explainAuthFailure(retried, withCa.kafka)?.message ?? '', /TRAJFLOW_KAFKA_TLS_CA_FILE does not hold the CA/);
  assert.equal(explainAuthFailure(retried, loadConfig(external).kafka), undefined, 'no TLS configured: not a TLS setting to fix');
});

test('a refused ClickHouse login (18.16 and current wording) names the settings; Basic auth carries the password', () => {
  const config = loadConfig({ ...external, TRAJFLOW_CLICKHOUSE_USER: 'ann', TRAJFLOW_CLICKHOUSE_PASSWORD: 'pw' });
  const { credentials } = config.clickhouse;
  assert.deepEqual(clickHouseAuthHeaders(credentials), { authorization: `Basic ${Buffer.from('ann:pw').toString('base64')}` });
  for (const [status, text] of [
    [401, 'Code: 193, e.displayText() = DB::Exception: Wrong password for user ann, e.what() = DB::Exception'],
    [516, 'Code: 516. DB::Exception: ann: Authentication failed: password is incorrect, or there is no user with such name. (AUTHENTICATION_FAILED)'],
  ] as const) {
    assert.match(
      explainRefusedLogin(status, text, config.clickhouse.url, credentials)?.message ?? '',
      /refused the login of user 'ann'.*check TRAJFLOW_CLICKHOUSE_USER and TRAJFLOW_CLICKHOUSE_PASSWORD\.$/,
    );
  }
  assert.equal(explainRefusedLogin(404, "Code: 60, e.displayText() = DB::Exception: Table trajflow.x doesn't exist", config.clickhouse.url, credentials), undefined);
});

test('a ClickHouse certificate this process does not trust, or https:// on a plain port, is a ConfigError saying what to set; other failures are not', () => {
  const url = 'https://ch:8443';
  const coded = (code: string, message: string) => Object.assign(new Error(message), { code });
  // fetch wraps the socket's error in its cause; node:https (the sink) raises it as is.
  for (const error of [
    new TypeError('fetch failed', { cause: coded('UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'unable to verify the first certificate') }),
    coded('SELF_SIGNED_CERT_IN_CHAIN', 'self-signed certificate in certificate chain'),
  ]) {
    const explained = explainTlsFailure(error, url);
    assert.ok(explained instanceof ConfigError);
    assert.match(
      explained.message,
      /^ClickHouse at https:\/\/ch:8443: its TLS certificate is not trusted here \((UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN):.*NODE_EXTRA_CA_CERTS=<the CA file>.*TRAJFLOW_CLICKHOUSE_URL/,
    );
  }
  for (const error of [coded('ERR_SSL_WRONG_VERSION_NUMBER', 'wrong version number'), coded('EPROTO', '80AC:error:0A00010B:SSL routines:ssl3_get_record:wrong version number')])
    assert.match(explainTlsFailure(error, url)?.message ?? '', /does not speak TLS on that port \(it answered in plain text\): check TRAJFLOW_CLICKHOUSE_URL/);
  for (const error of [new TypeError('fetch failed', { cause: coded('ECONNREFUSED', 'connect ECONNREFUSED') }), coded('EPROTO', 'other'), new Error('no code'), null, 'text'])
    assert.equal(explainTlsFailure(error, url), undefined);
});
