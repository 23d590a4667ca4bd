#!/usr/bin/env node
// The `trajflow` command. The sources are TypeScript run through tsx, so a clone needs no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../cli/main.ts');
// Exit explicitly: a command that failed may leave a client or timer open (e.g. a consumer whose
// pipeline stopped), and a failed part must end so a supervisor (trajflow train, systemd) sees it.
process.exit(await main(process.argv.slice(2)));
