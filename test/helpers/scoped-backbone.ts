// A test file's own topics and backbone: `before` creates the topics under a unique prefix and connects,
// `after` deletes the prefix's topics and disconnects. Call at the top level of the file.
import { after, before } from 'node:test';
import { loadConfig, type TrajflowConfig } from '../../core/config.js';
import { ensureTopics } from '../../infra/topics.js';
import { connectBackbone, type Backbone } from '../../streams/index.js';
import { uniqueName } from './kafka.js';

export interface ScopedBackbone {
  readonly config: TrajflowConfig;
  readonly backbone: Backbone;
}

export function scopedBackbone(name: string): ScopedBackbone {
  const scope: { config?: TrajflowConfig; backbone?: Backbone } = {};
  before(async () => {
    scope.config = { ...loadConfig(), topicPrefix: uniqueName(name) };
    await ensureTopics(scope.config);
    scope.backbone = await connectBackbone(scope.config, { clientId: `test-${name}` });
  });
  after(async () => {
    const { backbone, config } = scope;
    if (!backbone || !config) return;
    const admin = backbone.kafka.admin();
    await admin.connect();
    const ours = (await admin.listTopics()).filter((t) => t.startsWith(`${config.topicPrefix}.`));
    await admin.deleteTopics({ topics: ours, timeout: 20_000 }).catch(() => undefined);
    await admin.disconnect();
    await backbone.close();
  });
  return {
    get config() {
      return scope.config!;
    },
    get backbone() {
      return scope.backbone!;
    },
  };
}
