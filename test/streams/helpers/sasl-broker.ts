// A single Kafka broker of its own for the authentication tests: a SASL_PLAINTEXT listener with SCRAM-SHA-512,
// SCRAM-SHA-256 and PLAIN, and a SASL_SSL listener whose certificate a test CA signed (made with openssl), in a temporary folder on free ports, from the jars `trajflow up` caches (the
// configured TRAJFLOW_KAFKA_VERSION, 3.x or 4.x). The broker's own SCRAM user is added when the storage is
// formatted (KRaft keeps SCRAM credentials in its metadata log); the test's user is added afterwards through
// the Admin API (alterUserScramCredentials, what kafka-configs --alter --add-config 'SCRAM-SHA-512=[…]' calls).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type TrajflowConfig } from '../../../core/config.js';
import { Secret } from '../../../core/credentials.js';
import { fetchKafka } from '../../../infra/kafka/fetch.js';
import { formatProperties, renderServerProperties } from '../../../infra/kafka/properties.js';
import { newClusterId } from '../../../infra/kafka/storage.js';
import { freePort } from '../../../infra/free-port.js';
import { isAlive, run, spawnDetached, stopProcessGroup, tail, waitUntil } from '../../../infra/process.js';
import { createKafka } from '../../../streams/kafka-client.js';
import { makeTestCertificates } from '../../helpers/test-ca.js';

const BROKER_USER = 'broker';
const BROKER_PASSWORD = 'broker-secret-7d1c';

export interface SaslBroker {
  readonly version: string;
  readonly brokers: string;
  /** The SASL_SSL listener, and the PEM file of the CA that signed its certificate. */
  readonly tlsBrokers: string;
  readonly caFile: string;
  readonly dir: string;
  /** Adds (or replaces) a user's SCRAM-SHA-512 and SCRAM-SHA-256 credentials. */
  addScramUser(name: string, password: string): Promise<void>;
  stop(): Promise<void>;
}

/** A config for a client of `brokers` logging in with SASL `mechanism` as `username`. */
export function saslConfig(brokers: string, mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512', username: string, password: string): TrajflowConfig {
  const base = loadConfig({ ...process.env, TRAJFLOW_KAFKA_BROKERS: brokers });
  return { ...base, kafka: { ...base.kafka, security: { sasl: { mechanism, username, password: new Secret(password, 'TRAJFLOW_KAFKA_SASL_PASSWORD') } } } };
}

const jaas = (module: string, extra = ''): string => `${module} required username="${BROKER_USER}" password="${BROKER_PASSWORD}"${extra};`;

interface SaslLayout {
  readonly port: number;
  readonly tlsPort: number;
  readonly controllerPort: number;
  readonly dataDir: string;
  readonly logFile: string;
  /** PKCS#12 keystore of the SASL_SSL listener. */
  readonly keystore: string;
}

const KEYSTORE_PASSWORD = 'keystore-secret';

function saslProperties(layout: SaslLayout, plainUsers: Record<string, string>): Record<string, string> {
  const plainUserOptions = Object.entries({ [BROKER_USER]: BROKER_PASSWORD, ...plainUsers })
    .map(([name, password]) => ` user_${name}="${password}"`)
    .join('');
  const logins = (listener: string): Record<string, string> => ({
    [`listener.name.${listener}.scram-sha-512.sasl.jaas.config`]: jaas('org.apache.kafka.common.security.scram.ScramLoginModule'),
    [`listener.name.${listener}.scram-sha-256.sasl.jaas.config`]: jaas('org.apache.kafka.common.security.scram.ScramLoginModule'),
    // PLAIN's users are listed in the broker's config (user_<name>="<password>").
    [`listener.name.${listener}.plain.sasl.jaas.config`]: jaas('org.apache.kafka.common.security.plain.PlainLoginModule', plainUserOptions),
  });
  return {
    ...renderServerProperties(layout),
    listeners: `SASL_PLAINTEXT://127.0.0.1:${layout.port},SASL_SSL://127.0.0.1:${layout.tlsPort},CONTROLLER://127.0.0.1:${layout.controllerPort}`,
    'advertised.listeners': `SASL_PLAINTEXT://127.0.0.1:${layout.port},SASL_SSL://127.0.0.1:${layout.tlsPort}`,
    'inter.broker.listener.name': 'SASL_PLAINTEXT',
    'listener.security.protocol.map': 'SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT',
    'sasl.enabled.mechanisms': 'SCRAM-SHA-512,SCRAM-SHA-256,PLAIN',
    // The broker talks to itself (transaction markers) through this listener, as its own SCRAM user.
    'sasl.mechanism.inter.broker.protocol': 'SCRAM-SHA-512',
    ...logins('sasl_plaintext'),
    ...logins('sasl_ssl'),
    'listener.name.sasl_ssl.ssl.keystore.type': 'PKCS12',
    'listener.name.sasl_ssl.ssl.keystore.location': layout.keystore,
    'listener.name.sasl_ssl.ssl.keystore.password': KEYSTORE_PASSWORD,
  };
}

/** A test CA and a certificate it signs for 127.0.0.1, in `dir`; returns the CA's PEM file and the broker's keystore. */
async function makeCertificates(dir: string): Promise<{ caFile: string; keystore: string }> {
  const { caFile, certFile, keyFile } = await makeTestCertificates(dir);
  const keystore = join(dir, 'broker.p12');
  const args = ['pkcs12', '-export', '-in', certFile, '-inkey', keyFile, '-certfile', caFile, '-out', keystore, '-passout', `pass:${KEYSTORE_PASSWORD}`];
  const result = await run('openssl', args, { timeoutMs: 60_000 });
  if (result.status !== 0) throw new Error(`openssl pkcs12 failed:\n${result.output}`);
  return { caFile, keystore };
}

/** The Admin API call kafka-configs makes, as a single-file Java program (java runs .java sources directly). */
const ADD_SCRAM_USER = `
import java.util.*;
import org.apache.kafka.clients.admin.*;
public class AddScramUser {
  public static void main(String[] a) throws Exception {
    Properties p = new Properties();
    p.put("bootstrap.servers", a[0]);
    p.put("security.protocol", "SASL_PLAINTEXT");
    p.put("sasl.mechanism", "SCRAM-SHA-512");
    p.put("sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required username=\\"" + a[1] + "\\" password=\\"" + a[2] + "\\";");
    try (Admin admin = Admin.create(p)) {
      // One request per mechanism: the broker refuses two alterations of one user in a request.
      for (ScramMechanism m : new ScramMechanism[] {ScramMechanism.SCRAM_SHA_512, ScramMechanism.SCRAM_SHA_256})
        admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion(a[3], new ScramCredentialInfo(m, 8192), a[4]))).all().get();
    }
  }
}
`;

/** Starts the broker and waits until its own user can log in; `plainUsers` are the PLAIN logins it accepts. */
export async function startSaslBroker(plainUsers: Record<string, string>): Promise<SaslBroker> {
  const config = loadConfig();
  const dist = await fetchKafka(config);
  const dir = mkdtempSync(join(tmpdir(), 'trajflow-sasl-'));
  const ports = new Set<number>();
  while (ports.size < 3) ports.add(await freePort());
  const [port, tlsPort, controllerPort] = [...ports] as [number, number, number];
  const { caFile, keystore } = await makeCertificates(dir);
  const layout = { port, tlsPort, controllerPort, dataDir: join(dir, 'data'), logFile: join(dir, 'server.log'), keystore };
  const propertiesFile = join(dir, 'server.properties');
  writeFileSync(propertiesFile, formatProperties(saslProperties(layout, plainUsers), 'SASL test broker (test/streams/helpers/sasl-broker.ts)'));
  const classpath = join(dist.libs, '*');
  const format = await run(
    'java',
    [
      '-cp',
      classpath,
      'kafka.tools.StorageTool',
      'format',
      '--cluster-id',
      newClusterId(),
      '--config',
      propertiesFile,
      '--add-scram',
      `SCRAM-SHA-512=[name=${BROKER_USER},password=${BROKER_PASSWORD}]`,
    ],
    { timeoutMs: 120_000 },
  );
  if (format.status !== 0) throw new Error(`formatting the SASL broker's storage failed:\n${format.output}`);
  const outputFile = join(dir, 'output.log');
  const pid = spawnDetached({ command: 'java', args: ['-Xms128m', '-Xmx512m', '-cp', classpath, 'kafka.Kafka', propertiesFile], cwd: dir, outputFile });
  const brokers = `127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    await stopProcessGroup(pid, 10_000);
    rmSync(dir, { recursive: true, force: true });
  };
  const asBroker = saslConfig(brokers, 'scram-sha-512', BROKER_USER, BROKER_PASSWORD);
  const answers = async (): Promise<boolean> => {
    const admin = createKafka(asBroker, { retries: 0, quiet: true }).admin();
    try {
      await admin.connect();
      await admin.describeCluster();
      return true;
    } finally {
      await admin.disconnect();
    }
  };
  const outcome = await waitUntil(answers, { timeoutMs: 120_000, intervalMs: 500, giveUp: () => (isAlive(pid) ? undefined : 'exited') });
  if (outcome !== 'ok') {
    const logs = `${tail(outputFile, 30)}\n${tail(layout.logFile, 30)}`;
    await stop();
    throw new Error(`the SASL test broker (Kafka ${dist.version}) ${outcome === 'exited' ? 'exited' : 'did not answer'}:\n${logs}`);
  }
  const addScramUserSource = join(dir, 'AddScramUser.java');
  writeFileSync(addScramUserSource, ADD_SCRAM_USER);
  return {
    version: dist.version,
    brokers,
    tlsBrokers: `127.0.0.1:${tlsPort}`,
    caFile,
    dir,
    async addScramUser(name, password) {
      const result = await run('java', ['-cp', classpath, addScramUserSource, brokers, BROKER_USER, BROKER_PASSWORD, name, password], { timeoutMs: 120_000 });
      if (result.status !== 0) throw new Error(`adding SCRAM user ${name} failed:\n${result.output}`);
    },
    stop,
  };
}
