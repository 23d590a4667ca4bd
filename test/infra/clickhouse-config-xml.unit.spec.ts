import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderConfigXml, renderUsersXml } from '../../infra/clickhouse/config-xml.js';

const layout = {
  dir: '/tmp/h/clickhouse',
  httpPort: 41123,
  tcpPort: 41000,
  logFile: '/tmp/h/logs/clickhouse-server.log',
  errorLogFile: '/tmp/h/logs/clickhouse-server.err.log',
  usersFile: '/tmp/h/clickhouse/users.xml',
};

test('config.xml listens on loopback with the configured ports and no interserver port', () => {
  const xml = renderConfigXml(layout);
  assert.match(xml, /<listen_host>127\.0\.0\.1<\/listen_host>/);
  assert.match(xml, /<http_port>41123<\/http_port>/);
  assert.match(xml, /<tcp_port>41000<\/tcp_port>/);
  assert.doesNotMatch(xml, /interserver_http_port>/);
  assert.equal((xml.match(/<listen_host>/g) ?? []).length, 1);
});

test('config.xml keeps data, tmp, user files and format schemas in the project folder and logs in the log folder', () => {
  const xml = renderConfigXml(layout);
  for (const sub of ['data', 'tmp', 'user_files', 'format_schemas']) assert.ok(xml.includes(`/tmp/h/clickhouse/${sub}/`), sub);
  assert.match(xml, /<log>\/tmp\/h\/logs\/clickhouse-server\.log<\/log>/);
  assert.match(xml, /<errorlog>\/tmp\/h\/logs\/clickhouse-server\.err\.log<\/errorlog>/);
  assert.match(xml, /<users_config>\/tmp\/h\/clickhouse\/users\.xml<\/users_config>/);
});

test('paths with XML special characters are escaped', () => {
  const xml = renderConfigXml({ ...layout, dir: '/tmp/a&b' });
  assert.ok(xml.includes('/tmp/a&amp;b/data/'));
});

test('users.xml lets the default user in from loopback only', () => {
  const xml = renderUsersXml();
  assert.match(xml, /<ip>127\.0\.0\.1<\/ip>/);
  assert.doesNotMatch(xml, /::\/0/);
});
