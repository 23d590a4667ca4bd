// A test certificate authority made with openssl, and a server certificate it signs for 127.0.0.1: what a TLS
// listener in an integration test presents (the SASL_SSL broker, a TLS front for ClickHouse), with the CA file a
// client must be given to trust it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../../infra/process.js';

export interface TestCertificates {
  /** The CA's certificate (PEM): what the client trusts. */
  readonly caFile: string;
  /** The server's certificate (PEM, subjectAltName IP:127.0.0.1) and its private key. */
  readonly certFile: string;
  readonly keyFile: string;
}

/** Makes the CA and the server certificate in `dir` (valid 2 days). */
export async function makeTestCertificates(dir: string): Promise<TestCertificates> {
  const file = (name: string): string => join(dir, name);
  writeFileSync(file('san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  const steps: string[][] = [
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2', '-subj', '/CN=trajflow test CA'],
    ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('server.key'), '-out', file('server.csr'), '-subj', '/CN=127.0.0.1'],
    [
      'x509',
      '-req',
      '-in',
      file('server.csr'),
      '-CA',
      file('ca.pem'),
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-out',
      file('server.pem'),
      '-days',
      '2',
      '-extfile',
      file('san.ext'),
    ],
  ];
  for (const args of steps) {
    const result = await run('openssl', args, { timeoutMs: 60_000 });
    if (result.status !== 0) throw new Error(`openssl ${args[0]} failed:\n${result.output}`);
  }
  return { caFile: file('ca.pem'), certFile: file('server.pem'), keyFile: file('server.key') };
}
