// Where schema files live: <dir>/<event>/v<N>.avsc, one folder per event, one file per version.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project's schemas folder (this file's folder). */
export const defaultSchemasDir = fileURLToPath(new URL('.', import.meta.url));

export interface SchemaFile {
  readonly event: string;
  readonly version: number;
  readonly path: string;
}

const VERSION_FILE = /^v([1-9][0-9]*)\.avsc$/;
const EVENT_FOLDER = /^[a-z][a-z0-9_]*$/;

/** Every <event>/vN.avsc under dir, sorted by event then version. Folders without .avsc files are skipped. */
export function listSchemaFiles(dir: string = defaultSchemasDir): SchemaFile[] {
  const found: SchemaFile[] = [];
  for (const event of readdirSync(dir).sort()) {
    const folder = join(dir, event);
    if (!EVENT_FOLDER.test(event) || !statSync(folder).isDirectory()) continue;
    for (const file of readdirSync(folder)) {
      const match = VERSION_FILE.exec(file);
      if (match) found.push({ event, version: Number(match[1]), path: join(folder, file) });
    }
  }
  return found.sort((a, b) => (a.event === b.event ? a.version - b.version : a.event < b.event ? -1 : 1));
}

/** The highest version of each event, which is its current schema. */
export function latestSchemaFiles(dir: string = defaultSchemasDir): SchemaFile[] {
  const latest = new Map<string, SchemaFile>();
  for (const file of listSchemaFiles(dir)) latest.set(file.event, file); // sorted: the last one wins
  return [...latest.values()];
}
