// Renders docs/reference/http-api.md from the OpenAPI document (api/openapi.ts), so the page says what the
// served document says: run `node --import tsx scripts/docs-openapi.mjs` after changing the document.
// `--check` writes nothing and exits 1 when the page is stale (test/api/openapi.unit.spec.ts runs it).
// The prose around the generated parts is here too: the page is never edited by hand.
import { readFileSync, writeFileSync } from 'node:fs';
import { openApiDocument } from '../api/openapi.ts';

const OUT = new URL('../docs/reference/http-api.md', import.meta.url);
const BASE = 'http://127.0.0.1:18080';
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** A component ($ref) resolved, to any depth. */
function deref(doc, value) {
  if (value === null || typeof value !== 'object' || typeof value.$ref !== 'string') return value;
  const [, , kind, name] = value.$ref.split('/');
  return deref(doc, doc.components[kind][name]);
}

const refName = (value) => (value && typeof value.$ref === 'string' ? value.$ref.split('/').pop() : undefined);
const cell = (text) =>
  String(text ?? '')
    .replace(/\|/g, '\\|')
    .replace(/\n+/g, ' ');
const code = (value) => `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``;
const firstParagraph = (text) => String(text ?? '').split('\n\n')[0];

/** A schema in a few words: type, enumeration, range, pattern, default. */
function typeText(doc, schema) {
  const name = refName(schema);
  if (name) return `[${name}](#schema-${name.toLowerCase()})`;
  if (!schema || typeof schema !== 'object') return 'any';
  if (schema.anyOf || schema.oneOf) {
    const branches = (schema.anyOf ?? schema.oneOf).filter((b) => !(b.type === 'object' && b.required?.length === 1 && b.additionalProperties === false));
    return [...new Set(branches.map((b) => typeText(doc, b)))].join(' or ');
  }
  const types = [schema.type ?? 'any'].flat();
  let text;
  if (schema.enum) text = schema.enum.map(code).join(', ');
  else if (types.includes('array')) text = `list of ${typeText(doc, schema.items)}${types.includes('null') ? ' or null' : ''}`;
  else if (types[0] === 'object' && schema.additionalProperties && typeof schema.additionalProperties === 'object')
    text = `object of ${typeText(doc, schema.additionalProperties)}`;
  else text = types.join(' or ');
  if (schema.format === 'binary') text = 'bytes';
  if (schema.minimum !== undefined && schema.maximum !== undefined) text += ` ${schema.minimum}…${schema.maximum}`;
  else if (schema.minimum !== undefined) text += ` ≥ ${schema.minimum}`;
  else if (schema.maximum !== undefined) text += ` ≤ ${schema.maximum}`;
  if (schema.pattern) text += ` matching ${code(schema.pattern)}`;
  if (schema.default !== undefined) text += `, default ${code(schema.default)}`;
  return text;
}

const authOf = (op) => (op.security.length === 0 ? 'none' : op.security.some((s) => Object.keys(s).length === 0) ? 'token unless on loopback' : 'token when the server has tokens');

const quote = (text) => `'${text.replace(/'/g, `'\\''`)}'`;

/** One curl command per request media type (one without a body). */
function curls(doc, path, method, op) {
  const parameters = (op.parameters ?? []).map((p) => deref(doc, p));
  const url = path.replace(/\{(\w+)\}/g, (_, name) => encodeURIComponent(String(parameters.find((p) => p.name === name)?.example ?? name)));
  const query = parameters
    .filter((p) => p.in === 'query' && p.example !== undefined)
    .map((p) => `${p.name}=${encodeURIComponent(Array.isArray(p.example) ? p.example.join(',') : String(p.example))}`);
  const target = quote(`${BASE}${url}${query.length > 0 ? `?${query.join('&')}` : ''}`);
  const head = ['curl', '-sS', ...(op.responses['200']?.content?.['text/event-stream'] ? ['-N'] : []), ...(method === 'get' ? [] : ['-X', method.toUpperCase()])];
  const auth = authOf(op) === 'token when the server has tokens' ? ['-H', '"Authorization: Bearer $TRAJFLOW_TOKEN"'] : [];
  const bodies = Object.entries(op.requestBody?.content ?? {});
  if (bodies.length === 0) return [[...head, ...auth, target].join(' ')];
  return bodies.map(([mediaType, media]) => {
    const example = media.examples ? Object.values(media.examples)[0].value : deref(doc, media.schema).example;
    const data = example === undefined ? '--data-binary @step.avro' : `-d ${quote(JSON.stringify(example))}`;
    return [...head, ...auth, '-H', quote(`Content-Type: ${mediaType}`), data, target].join(' ');
  });
}

function operationSection(doc, path, method, op) {
  const lines = [`### ${method.toUpperCase()} ${path}`, '', `**${op.summary.replace(/[^.?!]$/, '$&.')}** ${op.description}`, '', `Authentication: ${authOf(op)}.`, ''];
  const parameters = (op.parameters ?? []).map((p) => deref(doc, p));
  if (parameters.length > 0) {
    lines.push('| parameter | in | type | description |', '|---|---|---|---|');
    for (const p of parameters) lines.push(`| \`${p.name}\`${p.required ? ' (required)' : ''} | ${p.in} | ${cell(typeText(doc, p.schema))} | ${cell(p.description)} |`);
    lines.push('');
  }
  if (op.requestBody) {
    lines.push('Request body:', '');
    for (const [mediaType, media] of Object.entries(op.requestBody.content))
      lines.push(
        `- \`${mediaType}\`: ${cell(typeText(doc, media.schema))}${deref(doc, media.schema).description && !refName(media.schema) ? ` — ${cell(deref(doc, media.schema).description)}` : ''}`,
      );
    lines.push('');
  }
  lines.push('| status | body | when |', '|---|---|---|');
  for (const [status, raw] of Object.entries(op.responses)) {
    const response = deref(doc, raw);
    const bodies = Object.entries(response.content ?? {}).map(([mediaType, media]) => `\`${mediaType}\` ${typeText(doc, media.schema)}`);
    lines.push(`| ${status} | ${cell(bodies.join('<br>'))} | ${cell(response.description)} |`);
  }
  lines.push('', '```sh', ...curls(doc, path, method, op), '```', '');
  return lines;
}

function schemaSection(doc, name, schema) {
  const lines = [`<a id="schema-${name.toLowerCase()}"></a>`, `### ${name}`, ''];
  if (schema.description) lines.push(schema.description, '');
  if (schema.oneOf) lines.push(`One of ${schema.oneOf.map((s) => typeText(doc, s)).join(', ')}.`, '');
  if (schema.properties) {
    const required = new Set(schema.required ?? []);
    lines.push('| field | type | required | description |', '|---|---|---|---|');
    for (const [field, property] of Object.entries(schema.properties)) {
      lines.push(`| \`${field}\` | ${cell(typeText(doc, property))} | ${required.has(field) ? 'yes' : 'no'} | ${cell(deref(doc, property).description)} |`);
    }
    if (schema.additionalProperties === false) lines.push('', 'No other fields are accepted.');
    lines.push('');
  }
  return lines;
}

/** The problem types with their status and title, from the examples of the responses (each type has one). */
function problemTypes(doc) {
  const found = new Map();
  const responses = [...Object.values(doc.components.responses), ...Object.values(doc.paths).flatMap((item) => Object.values(item).flatMap((op) => Object.values(op.responses)))];
  for (const response of responses) {
    for (const example of Object.values(response.content?.['application/problem+json']?.examples ?? {})) found.set(example.value.type, example.value);
  }
  return doc.components.schemas.Problem.properties.type.enum.map((type) => {
    const example = found.get(type);
    if (!example) throw new Error(`docs-openapi: no response example has the problem type ${type}; add one to api/openapi.ts`);
    return example;
  });
}

/** The title, the summary and how to get the document itself. */
function introduction(doc) {
  return [
    '<!-- Generated from api/openapi.ts by `node --import tsx scripts/docs-openapi.mjs`: edit those, not this page. -->',
    '',
    `# ${doc.info.title} (${doc.info.version})`,
    '',
    `${doc.info.summary}`,
    '',
    doc.info.description.replace(/ Reference: docs\/reference\/http-api\.md\./, ''),
    '',
    '## The document',
    '',
    `The API is described by an OpenAPI ${doc.openapi} document, served by the API itself (open, no token). Everything on this page is rendered from it.`,
    '',
    '```sh',
    `curl -sS ${BASE}/openapi.json -o openapi.json`,
    '```',
    '',
    'Any OpenAPI 3.1 tool can read it (client generators, Swagger UI). The unit tests (test/api/openapi.unit.spec.ts) validate it with swagger-parser, a dev dependency, and check it against the routes the server registers; to validate a saved copy from a checkout:',
    '',
    '```sh',
    `node -e "import('@apidevtools/swagger-parser').then((p) => p.default.validate('openapi.json')).then(() => console.log('valid'))"`,
    '```',
    '',
    'The web dashboard (`/`, `/static/`, `/vendor/uplot/`) is served by the same server but is not part of the API: it is a page for a browser, and reads the endpoints below like any client.',
    '',
  ];
}

/** The table of every operation, each linking to its section. */
function endpointTable(operations) {
  return [
    '## Endpoints',
    '',
    '| method | path | summary | authentication |',
    '|---|---|---|---|',
    ...operations.map(
      ({ path, method, op }) =>
        `| ${method.toUpperCase()} | [\`${path}\`](#${`${method}-${path}`
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, '')
          .replace(/ /g, '-')}) | ${cell(op.summary)} | ${authOf(op)} |`,
    ),
    '',
  ];
}

function authenticationSection(doc) {
  return [
    '## Authentication',
    '',
    doc.components.securitySchemes.bearerAuth.description,
    '',
    'The curl examples below pass the token on writes only; add `-H "Authorization: Bearer $TRAJFLOW_TOKEN"` to reads when the server is bound beyond loopback.',
    '',
  ];
}

/** The problem details: every type, the optional members, and one example. */
function errorsSection(doc) {
  const problem = doc.components.schemas.Problem;
  return [
    '## Errors: problem details',
    '',
    firstParagraph(problem.description),
    '',
    '| type | status | title |',
    '|---|---|---|',
    ...problemTypes(doc).map((p) => `| \`${p.type}\` | ${p.status} | ${cell(p.title)} |`),
    '',
    'Members (besides `type`, `title`, `status`, `detail`, always present):',
    '',
    ...Object.entries(problem.properties)
      .filter(([name]) => !problem.required.includes(name))
      .map(([name, schema]) => `- \`${name}\` (${typeText(doc, schema)}): ${schema.description}`),
    '',
    'For example, a read with a bad parameter:',
    '',
    '```http',
    'HTTP/1.1 400 Bad Request',
    'Content-Type: application/problem+json',
    '',
    JSON.stringify(Object.values(doc.components.responses.InvalidQuery.content['application/problem+json'].examples)[0].value, null, 2),
    '```',
    '',
  ];
}

function render(doc) {
  const operations = Object.entries(doc.paths).flatMap(([path, item]) => METHODS.filter((m) => item[m]).map((method) => ({ path, method, op: item[method] })));
  return [
    ...introduction(doc),
    ...endpointTable(operations),
    ...authenticationSection(doc),
    ...errorsSection(doc),
    '## Operations',
    '',
    ...operations.flatMap(({ path, method, op }) => operationSection(doc, path, method, op)),
    '## Schemas',
    '',
    ...Object.entries(doc.components.schemas).flatMap(([name, schema]) => schemaSection(doc, name, schema)),
  ]
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .replace(/\n*$/, '\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const text = render(openApiDocument());
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(OUT, 'utf8');
    } catch {}
    if (current !== text) {
      console.error('docs/reference/http-api.md is not the rendered OpenAPI document: run node --import tsx scripts/docs-openapi.mjs');
      process.exit(1);
    }
  } else {
    writeFileSync(OUT, text);
    console.log(`wrote ${OUT.pathname}`);
  }
}
