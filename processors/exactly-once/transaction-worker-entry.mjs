// Worker entry: the sources are TypeScript run through tsx, whose loader a worker thread must register itself.
import { register } from 'tsx/esm/api';

register();
await import('./transaction-worker.ts');
