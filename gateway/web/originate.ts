import type { Carrier } from '../../core/calls/carrier.ts';
import type { CallRecord } from '../../core/store/types.ts';

/**
 * The "carrier" of web calls: nothing rings. When the dialer gives a web call its live slot, the call waits in
 * `dialing` for the browser that holds its join token (the gateway answers it when the browser's stream
 * starts); a call whose browser never comes ends `no_answer` when its join token expires (recovery, with the
 * worker's `webCallJoinMs`; the API mints the token to the same deadline). Hanging up a web call is the
 * gateway's part (it ends the browser's stream).
 */
export class WebCallCarrier implements Carrier {
  readonly name = 'web';

  async originate(call: CallRecord): Promise<{ carrierCallId: string }> {
    return { carrierCallId: call.id };
  }

  async hangup(): Promise<void> {}

  async close(): Promise<void> {}
}
