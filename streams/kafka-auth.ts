// SASL and TLS for kafkajs from trajflow's config (core/credentials.ts), and a refused login turned into a
// ConfigError that names the setting to fix: a wrong password is the user's configuration, not an outage, so
// the command stops at start with exit code 2 instead of retrying. Secrets leave their Secret only here.
import type { ConnectionOptions } from 'node:tls';
import type { Kafka, KafkaConfig as KafkajsConfig, SASLOptions } from 'kafkajs';
import type { KafkaConfig } from '../core/config.js';
import { ConfigError } from '../core/errors.js';

/** kafkajs' `ssl` and `sasl` options for the configured cluster (none for a plaintext one). */
export function kafkajsSecurity(kafka: Pick<KafkaConfig, 'security'>): Pick<KafkajsConfig, 'ssl' | 'sasl'> {
  const { sasl, tls } = kafka.security ?? {};
  const ssl: ConnectionOptions | undefined = tls && {
    ...(tls.ca !== undefined ? { ca: tls.ca } : {}),
    ...(tls.cert !== undefined ? { cert: tls.cert } : {}),
    ...(tls.key !== undefined ? { key: tls.key.reveal() } : {}),
  };
  const saslOptions: SASLOptions | undefined = sasl && ({ mechanism: sasl.mechanism, username: sasl.username, password: sasl.password.reveal() } as SASLOptions);
  return { ...(ssl ? { ssl } : {}), ...(saslOptions ? { sasl: saslOptions } : {}) };
}

const MECHANISM_NAMES = { plain: 'PLAIN', 'scram-sha-256': 'SCRAM-SHA-256', 'scram-sha-512': 'SCRAM-SHA-512' } as const;

type Failure = Error & { code?: string; cause?: unknown; originalError?: unknown };

/** The first error in `error`'s chain (kafkajs wraps in originalError or cause) that `matches`. */
function inChain(error: unknown, matches: (e: Failure) => boolean): Failure | undefined {
  for (let e = error as Failure | undefined, depth = 0; e && depth < 5; depth++) {
    if (matches(e)) return e;
    e = (e.originalError ?? e.cause) as Failure | undefined;
  }
  return undefined;
}

/** Node's codes for a server certificate it does not trust (kafkajs keeps the code on its connection error). */
const UNTRUSTED_CERTIFICATE = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

function untrustedBroker(error: unknown, kafka: Pick<KafkaConfig, 'brokers' | 'security'>): ConfigError | undefined {
  const tls = kafka.security?.tls;
  const failure = tls && inChain(error, (e) => e.code !== undefined && UNTRUSTED_CERTIFICATE.has(e.code));
  if (failure === undefined) return undefined;
  const fix =
    tls?.ca === undefined
      ? "set TRAJFLOW_KAFKA_TLS_CA_FILE to the PEM file of the CA that signed the brokers' certificates"
      : "TRAJFLOW_KAFKA_TLS_CA_FILE does not hold the CA that signed the brokers' certificates (or their names do not match the broker addresses): fix the file or the addresses";
  return new ConfigError(`Kafka at ${kafka.brokers.join(',')}: TLS does not trust the broker's certificate (${failure.code}): ${fix}.`);
}

/** A ConfigError naming the setting when `error` is a refused SASL login or an untrusted TLS certificate; undefined otherwise. */
export function explainAuthFailure(error: unknown, kafka: Pick<KafkaConfig, 'brokers' | 'security'>): ConfigError | undefined {
  const failure = inChain(error, (e) => e.name === 'KafkaJSSASLAuthenticationError');
  const sasl = kafka.security?.sasl;
  if (failure === undefined || sasl === undefined) return untrustedBroker(error, kafka);
  const said = failure.message.split(sasl.password.reveal()).join('[redacted]');
  const mechanism = MECHANISM_NAMES[sasl.mechanism];
  if (/not supported|not enabled|UNSUPPORTED_SASL_MECHANISM/i.test(said)) {
    return new ConfigError(`Kafka at ${kafka.brokers.join(',')} does not accept SASL ${mechanism} (${said}): set TRAJFLOW_KAFKA_SASL_MECHANISM to one its listener enables.`);
  }
  return new ConfigError(
    `Kafka at ${kafka.brokers.join(',')} refused the SASL ${mechanism} login of user '${sasl.username}' (${said}): check TRAJFLOW_KAFKA_SASL_USERNAME and ${sasl.password.setting}.`,
  );
}

/** Makes every producer, consumer and admin of `client` report a refused login as explainAuthFailure's ConfigError. */
export function explainRefusedLogins(client: Kafka, kafka: Pick<KafkaConfig, 'brokers' | 'security'>): Kafka {
  if (kafka.security?.sasl === undefined && kafka.security?.tls === undefined) return client;
  const guard = <T extends { connect(): Promise<void> }>(part: T): T => {
    const connect = part.connect.bind(part);
    part.connect = async () => {
      try {
        await connect();
      } catch (error) {
        throw explainAuthFailure(error, kafka) ?? error;
      }
    };
    return part;
  };
  const { producer, consumer, admin } = client;
  client.producer = (options) => guard(producer.call(client, options));
  client.consumer = (options) => guard(consumer.call(client, options));
  client.admin = (options) => guard(admin.call(client, options));
  return client;
}
