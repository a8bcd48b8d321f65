// Web-call client for the voice agent gateway (protocol: gateway/web/PROTOCOL.md). Plain ES module, no build.
//
//   import { WebCall } from '/web/static/client.js';
//   const call = new WebCall({ url: 'wss://gateway.example/web/call_...?token=...', codec: 'opus' });
//   call.addEventListener('ready', ...); await call.start(); ... call.hangUp();
//
// Captures the microphone with getUserMedia into an AudioWorklet, sends 20 ms frames, plays the agent's audio,
// acknowledges marks when the audio before them has played, and flushes on `clear`. Codecs: `pcm16` (default;
// 16 kHz PCM16 frames) or `opus` (48 kHz, one Opus packet per 20 ms, encoded and decoded with WebCodecs; falls
// back to pcm16 where WebCodecs cannot do Opus, and says so in `stats.codecFallback`).
// Events: ready (detail: the server's ready message), mark-played (detail: {name}), cleared, ended (detail:
// {code, reason, byeReason, call, hungUp}), error, audio-blocked (the browser holds playback until the user
// interacts with the page: call `resumeAudio()` from a click), and the call events, each named by its type with
// the message as detail: call.status, transcript.partial, transcript.final, caller.turn, agent.turn,
// interruption, latency.

const PCM16_RATE = 16000;
const OPUS_RATE = 48000;
const OPUS_ENCODER = {
  codec: 'opus',
  sampleRate: OPUS_RATE,
  numberOfChannels: 1,
  bitrate: 24000,
  opus: { frameDuration: 20000 },
};
const OPUS_DECODER = { codec: 'opus', sampleRate: OPUS_RATE, numberOfChannels: 1 };
/** What the server says about the call (PROTOCOL.md "Call events"), re-dispatched as events of these names. */
const CALL_EVENTS = new Set([
  'call.status',
  'transcript.partial',
  'transcript.final',
  'caller.turn',
  'agent.turn',
  'interruption',
  'latency',
]);
/** How long start() waits for the audio context to run before going on without sound (autoplay policy). */
const RESUME_WAIT_MS = 1000;

/** Whether this browser's WebCodecs can both encode and decode Opus as the client uses it. */
export async function opusSupported() {
  if (typeof AudioEncoder === 'undefined' || typeof AudioDecoder === 'undefined') return false;
  try {
    const [encoder, decoder] = await Promise.all([
      AudioEncoder.isConfigSupported(OPUS_ENCODER),
      AudioDecoder.isConfigSupported(OPUS_DECODER),
    ]);
    return encoder.supported === true && decoder.supported === true;
  } catch {
    return false;
  }
}

export class WebCall extends EventTarget {
  /** @param {{url: string, codec?: 'pcm16' | 'opus', microphone?: MediaStreamConstraints['audio']}} options */
  constructor(options) {
    super();
    this.url = options.url;
    this.requestedCodec = options.codec ?? 'pcm16';
    this.microphone = options.microphone ?? {
      channelCount: 1,
      echoCancellation: true,
      noiseSuppression: true,
    };
    this.stats = {
      codec: undefined,
      framesSent: 0,
      audioMessagesReceived: 0,
      audioBytesReceived: 0,
      /** Agent audio handed to playback (for Opus, as decoded). */
      audioMsReceived: 0,
      marksPlayed: 0,
      clears: 0,
      decodeErrors: 0,
    };
    this.ready = false;
    /** The latest call.status message: {status, ended_reason}. */
    this.call = undefined;
    /** The reason of the server's bye, when it ended the call. */
    this.byeReason = undefined;
    /** Whether this side hung up (`hangUp()`). */
    this.hungUp = false;
    this.ws = undefined;
    this.context = undefined;
    this.node = undefined;
    this.media = undefined;
    this.sampleRate = PCM16_RATE;
    this.encoder = undefined;
    this.decoder = undefined;
    this.samplesEncoded = 0;
    this.packetsDecoded = 0;
    /** Bumped on every clear, so that marks still waiting for the decoder are dropped with the audio. */
    this.generation = 0;
  }

  async start() {
    const opus = this.requestedCodec === 'opus' && (await opusSupported());
    const codec = opus ? 'opus' : 'pcm16';
    this.stats.codec = codec;
    if (this.requestedCodec === 'opus' && !opus) {
      this.stats.codecFallback = 'WebCodecs Opus is not available; using pcm16';
    }
    // The context runs at the wire rate, so the worklet's frames and the decoder's output need no resampling.
    this.sampleRate = opus ? OPUS_RATE : PCM16_RATE;

    // The microphone first: a page that captures may play sound without a click in more browsers.
    this.media = await navigator.mediaDevices.getUserMedia({ audio: this.microphone, video: false });
    const context = new AudioContext({ sampleRate: this.sampleRate, latencyHint: 'interactive' });
    this.context = context;
    await context.audioWorklet.addModule(new URL('./worklet.js', import.meta.url));
    const source = context.createMediaStreamSource(this.media);
    const node = new AudioWorkletNode(context, 'web-call-io', {
      numberOfInputs: 1,
      numberOfOutputs: 1,
      outputChannelCount: [1],
      processorOptions: { frameSamples: this.sampleRate / 50 },
    });
    this.node = node;
    source.connect(node);
    node.connect(context.destination);
    node.port.onmessage = (event) => this.fromWorklet(event.data);
    if (context.state === 'suspended') {
      // Without a user gesture the browser may keep the context suspended (its resume() never settles): join
      // anyway, and let the page ask for a click.
      const resumed = context.resume().then(
        () => true,
        () => false,
      );
      const waited = new Promise((resolve) => setTimeout(() => resolve(false), RESUME_WAIT_MS));
      if (!(await Promise.race([resumed, waited]))) this.dispatchEvent(new CustomEvent('audio-blocked'));
    }
    if (opus) {
      this.encoder = this.newEncoder();
      this.decoder = this.newDecoder();
    }

    const ws = new WebSocket(this.url);
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    ws.onopen = () => this.sendJson({ type: 'hello', codec, sample_rate: this.sampleRate });
    ws.onmessage = (event) => this.fromServer(event.data);
    ws.onclose = (event) => this.ended(event.code, event.reason);
    ws.onerror = () => this.error('websocket error');
  }

  /** Starts playback held back by the browser's autoplay policy; call from a user gesture. */
  async resumeAudio() {
    await this.context?.resume();
  }

  /** Sends a DTMF digit (0-9, *, #) to the agent. */
  dtmf(digit) {
    this.sendJson({ type: 'dtmf', digit: String(digit) });
  }

  hangUp() {
    this.hungUp = true;
    this.sendJson({ type: 'bye' });
    this.ws?.close(1000, 'bye');
  }

  fromWorklet(msg) {
    if (msg.type === 'frame') {
      this.sendFrame(msg.pcm);
    } else if (msg.type === 'played') {
      this.stats.marksPlayed++;
      this.sendJson({ type: 'ack', name: msg.name });
      this.dispatchEvent(new CustomEvent('mark-played', { detail: { name: msg.name } }));
    } else if (msg.type === 'cleared') {
      this.sendJson({ type: 'cleared' });
      this.dispatchEvent(new CustomEvent('cleared'));
    }
  }

  sendFrame(pcm) {
    if (!this.ready || this.ws?.readyState !== WebSocket.OPEN) return;
    if (!this.encoder) {
      this.ws.send(pcm);
      this.stats.framesSent++;
      return;
    }
    if (this.encoder.state !== 'configured') return;
    const samples = new Int16Array(pcm);
    const data = new AudioData({
      format: 's16',
      sampleRate: this.sampleRate,
      numberOfFrames: samples.length,
      numberOfChannels: 1,
      timestamp: Math.round((this.samplesEncoded * 1e6) / this.sampleRate),
      data: samples,
    });
    this.samplesEncoded += samples.length;
    this.encoder.encode(data);
    data.close();
  }

  fromServer(data) {
    if (data instanceof ArrayBuffer) {
      this.stats.audioMessagesReceived++;
      this.stats.audioBytesReceived += data.byteLength;
      if (this.decoder) this.decode(data);
      else this.play(new Int16Array(data));
      return;
    }
    let msg;
    try {
      msg = JSON.parse(data);
    } catch {
      return;
    }
    if (msg.type === 'ready') {
      this.ready = true;
      this.dispatchEvent(new CustomEvent('ready', { detail: msg }));
    } else if (msg.type === 'mark') {
      this.mark(msg.name);
    } else if (msg.type === 'clear') {
      this.clear();
    } else if (msg.type === 'bye') {
      this.byeReason = msg.reason;
      this.ws?.close(1000, 'bye');
    } else if (CALL_EVENTS.has(msg.type)) {
      if (msg.type === 'call.status') this.call = { status: msg.status, ended_reason: msg.ended_reason };
      this.dispatchEvent(new CustomEvent(msg.type, { detail: msg }));
    }
  }

  play(samples) {
    this.stats.audioMsReceived += (samples.length * 1000) / this.sampleRate;
    this.node?.port.postMessage({ type: 'audio', pcm: samples.buffer }, [samples.buffer]);
  }

  mark(name) {
    if (!this.decoder) {
      this.node?.port.postMessage({ type: 'mark', name });
      return;
    }
    // The audio before the mark may still be in the decoder: queue the mark once all of it has come out.
    // A flush holds back later packets until it resolves, so nothing after the mark overtakes it.
    const generation = this.generation;
    this.decoder
      .flush()
      .catch(() => {})
      .then(() => {
        if (generation === this.generation) this.node?.port.postMessage({ type: 'mark', name });
      });
  }

  clear() {
    this.stats.clears++;
    if (this.decoder) {
      // Drops the packets still being decoded (and rejects the flushes of marks waiting behind them).
      this.generation++;
      if (this.decoder.state === 'closed') {
        this.decoder = this.newDecoder();
      } else {
        this.decoder.reset();
        this.decoder.configure(OPUS_DECODER);
      }
    }
    this.node?.port.postMessage({ type: 'clear' });
  }

  decode(packet) {
    // A decoder that failed is closed for good (WebCodecs errors are fatal): start a new one.
    if (this.decoder.state === 'closed') this.decoder = this.newDecoder();
    const timestamp = this.packetsDecoded++ * 20000;
    this.decoder.decode(new EncodedAudioChunk({ type: 'key', timestamp, data: packet }));
  }

  newEncoder() {
    const encoder = new AudioEncoder({
      output: (chunk) => {
        if (this.ws?.readyState !== WebSocket.OPEN) return;
        const packet = new Uint8Array(chunk.byteLength);
        chunk.copyTo(packet);
        this.ws.send(packet);
        this.stats.framesSent++;
      },
      error: (err) => this.error(`opus encoder: ${err.message}`),
    });
    encoder.configure(OPUS_ENCODER);
    return encoder;
  }

  newDecoder() {
    const decoder = new AudioDecoder({
      output: (data) => {
        const samples = new Int16Array(data.numberOfFrames);
        data.copyTo(samples, { planeIndex: 0, format: 's16' });
        data.close();
        this.play(samples);
      },
      error: () => this.stats.decodeErrors++,
    });
    decoder.configure(OPUS_DECODER);
    return decoder;
  }

  sendJson(value) {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(value));
  }

  error(message) {
    this.dispatchEvent(new CustomEvent('error', { detail: { message } }));
  }

  ended(code, reason) {
    this.ready = false;
    for (const track of this.media?.getTracks() ?? []) track.stop();
    for (const codec of [this.encoder, this.decoder]) if (codec && codec.state !== 'closed') codec.close();
    this.context?.close().catch(() => {});
    const detail = { code, reason, byeReason: this.byeReason, call: this.call, hungUp: this.hungUp };
    this.dispatchEvent(new CustomEvent('ended', { detail }));
  }
}
