import { TWILIO_STATUS_CALLBACK_PATH } from '../../control-api/routes/carriers/twilio.ts';
import type { CarrierSet } from '../../core/calls/carrier-choice.ts';
import { settleRingOutcomes } from '../../core/calls/dialer.ts';
import { SandboxCarrier } from '../../gateway/carriers/sandbox/originate.ts';
import { TwilioCarrier } from '../../gateway/carriers/twilio/originate.ts';
import { WebCallCarrier } from '../../gateway/web/originate.ts';
import type { CallEngines } from '../engines.ts';
import type { SharedParts } from './parts.ts';

/** The carriers a worker dials through, built from the configuration. */
export function buildCarriers(
  parts: SharedParts,
  engines: CallEngines,
): CarrierSet & { sandbox: SandboxCarrier | undefined } {
  const { config, logger } = parts;
  const mediaUrl = mediaUrlOf(parts);
  const sandbox = mediaUrl
    ? new SandboxCarrier({
        gatewayUrl: mediaUrl,
        tokens: parts.tokens,
        reportRingOutcome: settleRingOutcomes(parts.lifecycle),
        ringMs: config.sandboxRingMs,
        answerDelayMs: config.sandboxAnswerDelayMs,
        voices: engines.voices,
        logger: logger.child({ carrier: 'sandbox' }),
      })
    : undefined;
  if (!sandbox) logger.warn('no gateway to dial into: set PUBLIC_GATEWAY_URL; calls will fail');
  const twilio =
    config.twilio && mediaUrl && config.publicApiUrl
      ? new TwilioCarrier({
          apiBase: config.twilio.apiBase,
          accountSid: config.twilio.accountSid,
          authToken: config.twilio.authToken,
          fromNumber: config.twilio.fromNumber,
          mediaUrl,
          statusCallbackUrl: `${config.publicApiUrl.replace(/\/+$/, '')}${TWILIO_STATUS_CALLBACK_PATH}`,
          tokens: parts.tokens,
        })
      : undefined;
  if (config.twilio && !twilio)
    logger.warn('Twilio needs PUBLIC_API_URL and PUBLIC_GATEWAY_URL; not dialing');
  return { web: new WebCallCarrier(), sandbox, production: twilio };
}

/** Why a production call found no carrier, in the settings an operator must set. */
export function whyNoCarrier(parts: SharedParts): string {
  if (!mediaUrlOf(parts)) return 'no media gateway to dial into: set PUBLIC_GATEWAY_URL';
  return parts.config.twilio
    ? 'Twilio is configured but needs PUBLIC_API_URL and a wss:// PUBLIC_GATEWAY_URL'
    : 'production calls need a carrier account: set TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, TWILIO_FROM_NUMBER, PUBLIC_API_URL and PUBLIC_GATEWAY_URL';
}

/** The gateway carriers point calls' media at (ws:// or wss://): the public one, else this node's own. */
function mediaUrlOf(parts: SharedParts): string | undefined {
  const url = parts.config.publicGatewayUrl ?? parts.localGatewayUrl();
  return url?.replace(/^http/, 'ws');
}
