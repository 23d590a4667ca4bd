#!/usr/bin/env node
// Builds the installable SDK into dist/ (run by "prepack", so `npm pack` and `npm publish` ship a fresh build):
// tsc with tsconfig.build.json emits JavaScript and .d.ts for sdk/index.ts and everything it imports, and the
// Avro schema files are copied beside the built schemas module — SchemaRegistry.fromSchemasDir() reads
// <folder of schemas/files.js>/<event>/vN.avsc at run time, in the package as in the repository.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

const started = Date.now();
rmSync(dist, { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
// The same <event>/vN.avsc listing the registry reads (schemas/files.ts), nothing else of the folder.
// Imported by computed URL: dist/ exists only after tsc above (a static specifier would not resolve in a clean checkout).
const { listSchemaFiles } = await import(pathToFileURL(join(dist, 'schemas', 'files.js')).href);
const schemas = listSchemaFiles(join(root, 'schemas'));
for (const file of schemas) {
  const target = join(dist, 'schemas', relative(join(root, 'schemas'), file.path));
  mkdirSync(dirname(target), { recursive: true });
  cpSync(file.path, target);
}
console.log(`build-sdk: dist/ built in ${((Date.now() - started) / 1000).toFixed(1)} s (${schemas.length} schema files)`);
