// Integration (a current ClickHouse, 26.x, in this process through chdb; no server): the migrations, every
// read-model query and every SQL cookbook block, with the same assertions as against the local 18.16 server
// (clickhouse-18.int.spec.ts). The runner must take ALTER TABLE … ADD COLUMN in its IF NOT EXISTS form here.
import { ChdbStore } from '../helpers/chdb.js';
import { clickHouseSuite } from './clickhouse-suite.js';

clickHouseSuite({
  open: async () => {
    const store = ChdbStore.open();
    return { target: store, close: async () => store.close() };
  },
  version: /^26\./,
  addColumnForm: /ADD COLUMN IF NOT EXISTS \(ClickHouse 19\.1 and later\) for 2 statements$/,
});
