#!/usr/bin/env node
// fsdp-sim CLI shim: registers tsx (TypeScript on the fly) and runs src/cli/main.ts.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
