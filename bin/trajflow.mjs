#!/usr/bin/env node
// The `trajflow` command. The sources are TypeScript run through tsx, so a clone needs no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
