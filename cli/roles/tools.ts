import { SecretCipher } from '../../core/secrets/cipher.ts';
import { SecretService } from '../../core/secrets/service.ts';
import { ToolRunner } from '../../core/tools/runner.ts';
import type { SharedParts, Teardown } from './parts.ts';

/**
 * Runs the customer's tools (pre_call on the worker before dialing, on_call on the gateway during calls), with
 * the secrets of their workspace. `extraCa`: a CA trusted besides the default roots (tests).
 */
export function buildToolRunner(
  parts: SharedParts,
  teardown: Teardown,
  extraCa: string | undefined,
): ToolRunner {
  const runner = new ToolRunner({
    secrets: new SecretService(parts.store, new SecretCipher(parts.secretKey)),
    allowPrivate: parts.config.allowPrivateWebhooks,
    extraCa,
    clock: parts.clock,
  });
  teardown.add(() => runner.close());
  return runner;
}
