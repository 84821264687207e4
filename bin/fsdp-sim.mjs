#!/usr/bin/env node
// fsdp-sim CLI shim: registers tsx (TypeScript on the fly) and runs src/cli/cli.ts.
import { register } from 'tsx/esm/api';

register();
// main.ts's own process entry: the same EPIPE handler and internal-error wrapper as `npm run sim`
const { runProcess } = await import('../src/cli/cli.ts');
await runProcess(process.argv.slice(2));
