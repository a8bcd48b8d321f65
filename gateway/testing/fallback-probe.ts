/**
 * Run as a child process with UWS_USE_FALLBACK=1 (server.test.ts): tries to start the gateway, with the fallback
 * allowed when argv[2] is "1", and prints what happened.
 */
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { startGateway } from '../server.ts';
import { MemoryTokenClaims, StreamTokens } from '../tokens.ts';
import { echoHandler } from './echo-handler.ts';

const allowFallback = process.argv[2] === '1';
try {
  const gateway = await startGateway({
    host: '127.0.0.1',
    port: 0,
    allowFallback,
    tokens: new StreamTokens({
      secret: 'fallback-probe-secret-0123456789abcdef',
      claims: new MemoryTokenClaims(),
    }),
    handlerFactory: echoHandler,
    registry: new Registry(),
    logger: pino({ level: 'silent' }),
  });
  console.log(`started native=${gateway.stats().native}`);
  await gateway.close();
} catch (err) {
  console.log(`refused ${(err as Error).name}: ${(err as Error).message}`);
}
