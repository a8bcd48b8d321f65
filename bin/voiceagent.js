#!/usr/bin/env node
// The operator's entry point: `voiceagent serve`, `voiceagent workspace create`, ...
// TypeScript sources run through tsx's loader, so there is no build step to forget.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
// The command is done (a server has closed, or failed to start): nothing left may keep the process alive.
setTimeout(() => process.exit(), 1_000).unref();
