import { JsonStreamMedia } from './json-stream.ts';
import type { CarrierEvent, MediaFormat } from './types.ts';
import { asObject, asString, field, type JsonObject, takeToken } from './wire.ts';

/**
 * The Twilio Media Streams protocol, which Exotel's voicebot stream copies. In: `connected`, `start`, `media`,
 * `dtmf`, `mark` (the echo of ours) and `stop`. Out: `media`, `mark` and `clear`, each naming the stream by the
 * sid the start message gave. Each carrier reads its own start message (field names, formats, defaults) and
 * spells the sid's key its own way; where a carrier reads a message more leniently, it widens the readers below.
 */
export abstract class TwilioProtocolMedia extends JsonStreamMedia {
  /** How outbound messages spell the stream sid's key. */
  protected abstract readonly streamSidKey: 'streamSid' | 'stream_sid';
  private streamSid = '';

  protected carrierMessage(msg: JsonObject): CarrierEvent {
    switch (msg.event) {
      case 'connected':
        return { type: 'ignored' };
      case 'mark': {
        const name = this.markName(msg);
        if (name === undefined) return { type: 'bad', reason: 'bad_payload' };
        return { type: 'playback_ack', name };
      }
      case 'stop':
        return { type: 'stop', reason: this.stopReason(msg) };
      default:
        return this.otherEvent(msg);
    }
  }

  /** The name in an echoed `mark`. */
  protected markName(msg: JsonObject): string | undefined {
    return asString(field(asObject(msg.mark), 'name'));
  }

  protected stopReason(msg: JsonObject): string | undefined {
    return asString(field(asObject(msg.stop), 'reason'));
  }

  /** An event the protocol does not name. */
  protected otherEvent(_msg: JsonObject): CarrierEvent {
    return { type: 'bad', reason: 'unknown_event' };
  }

  /** A valid start: the stream's audio edges and its start event, with the token taken out of the parameters. */
  protected started(
    streamSid: string,
    inbound: MediaFormat,
    outbound: MediaFormat,
    chunkSamples: number,
    carrierCallId: string | undefined,
    customParameters: Record<string, string>,
  ): CarrierEvent {
    const token = takeToken(customParameters);
    this.streamSid = streamSid;
    this.begin(
      inbound,
      outbound,
      chunkSamples,
      `{"event":"media","${this.streamSidKey}":${JSON.stringify(streamSid)},"media":{"payload":"`,
    );
    return {
      type: 'start',
      start: { streamId: streamSid, carrierCallId, customParameters, format: inbound },
      token,
      reply: [],
    };
  }

  protected markMessage(name: string): JsonObject {
    return { event: 'mark', [this.streamSidKey]: this.streamSid, mark: { name } };
  }

  protected clearMessage(): JsonObject {
    return { event: 'clear', [this.streamSidKey]: this.streamSid };
  }
}
