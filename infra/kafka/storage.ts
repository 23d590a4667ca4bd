// Formats the broker's data folder for KRaft once. The cluster id is kept in a file next to it so a
// re-format (after the data folder was deleted) keeps the same id.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ServiceError } from '../../core/errors.js';
import { run } from '../process.js';

/** A Kafka Uuid as the broker prints it: 16 random bytes, base64url without padding. */
export function newClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    // Kafka's Uuid.randomUuid avoids ids starting with '-', which command lines would read as a flag.
    if (!id.startsWith('-')) return id;
  }
}

export function clusterId(file: string): string {
  if (existsSync(file)) {
    const id = readFileSync(file, 'utf8').trim();
    if (/^[A-Za-z0-9_-]{22}$/.test(id)) return id;
  }
  const id = newClusterId();
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${id}\n`);
  return id;
}

export function isFormatted(dataDir: string): boolean {
  return existsSync(join(dataDir, 'meta.properties'));
}

export interface FormatOptions {
  readonly java: string;
  readonly libs: string;
  readonly serverProperties: string;
  /** The JVM option naming the logging config (its property differs between Kafka 3.x and 4.x). */
  readonly loggingOption: string;
  readonly dataDir: string;
  readonly clusterIdFile: string;
}

/** Runs `kafka.tools.StorageTool format` unless the data folder already has meta.properties. */
export async function formatStorage(options: FormatOptions): Promise<'formatted' | 'already'> {
  if (isFormatted(options.dataDir)) return 'already';
  mkdirSync(options.dataDir, { recursive: true });
  const id = clusterId(options.clusterIdFile);
  const result = await run(
    options.java,
    [options.loggingOption, '-cp', join(options.libs, '*'), 'kafka.tools.StorageTool', 'format', '--ignore-formatted', '--cluster-id', id, '--config', options.serverProperties],
    { timeoutMs: 120_000 },
  );
  if (result.status !== 0) {
    throw new ServiceError(
      `formatting the Kafka data folder ${options.dataDir} failed:\n${result.error ? `${options.java}: ${result.error.message}` : result.output.trim()}\nIf the folder holds data of another cluster, delete it (all topics are lost) and run 'trajflow up' again.`,
    );
  }
  return 'formatted';
}
