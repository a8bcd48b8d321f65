// Web-call client for the voice agent gateway (protocol: gateway/web/PROTOCOL.md). Plain ES module, no build.
//
//   import { WebCall } from '/web/static/client.js';
//   const call = new WebCall({ url: 'wss://gateway.example/web/call_...?token=...' });
//   call.addEventListener('ready', ...); await call.start(); ... call.hangUp();
//
// Captures the microphone with getUserMedia into an AudioWorklet at 16 kHz, sends 20 ms PCM16 frames, plays
// the agent's audio, acknowledges marks when the audio before them has played, and flushes on `clear`.
// Events: ready (detail: the server's ready message), mark-played (detail: {name}), cleared, ended
// (detail: {code, reason}), error.

const SAMPLE_RATE = 16000;
const FRAME_SAMPLES = 320;

export class WebCall extends EventTarget {
  /** @param {{url: string, microphone?: MediaStreamConstraints['audio']}} options */
  constructor(options) {
    super();
    this.url = options.url;
    this.microphone = options.microphone ?? {
      channelCount: 1,
      echoCancellation: true,
      noiseSuppression: true,
    };
    this.stats = {
      framesSent: 0,
      audioMessagesReceived: 0,
      audioBytesReceived: 0,
      marksPlayed: 0,
      clears: 0,
    };
    this.ready = false;
    this.ws = undefined;
    this.context = undefined;
    this.node = undefined;
    this.media = undefined;
  }

  async start() {
    const context = new AudioContext({ sampleRate: SAMPLE_RATE, latencyHint: 'interactive' });
    this.context = context;
    await context.audioWorklet.addModule(new URL('./worklet.js', import.meta.url));
    this.media = await navigator.mediaDevices.getUserMedia({ audio: this.microphone, video: false });
    const source = context.createMediaStreamSource(this.media);
    const node = new AudioWorkletNode(context, 'web-call-io', {
      numberOfInputs: 1,
      numberOfOutputs: 1,
      outputChannelCount: [1],
      processorOptions: { frameSamples: FRAME_SAMPLES },
    });
    this.node = node;
    source.connect(node);
    node.connect(context.destination);
    node.port.onmessage = (event) => this.fromWorklet(event.data);
    if (context.state === 'suspended') await context.resume();

    const ws = new WebSocket(this.url);
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    ws.onopen = () => this.sendJson({ type: 'hello', codec: 'pcm16', sample_rate: SAMPLE_RATE });
    ws.onmessage = (event) => this.fromServer(event.data);
    ws.onclose = (event) => this.ended(event.code, event.reason);
    ws.onerror = () =>
      this.dispatchEvent(new CustomEvent('error', { detail: { message: 'websocket error' } }));
  }

  /** Sends a DTMF digit (0-9, *, #) to the agent. */
  dtmf(digit) {
    this.sendJson({ type: 'dtmf', digit: String(digit) });
  }

  hangUp() {
    this.sendJson({ type: 'bye' });
    this.ws?.close(1000, 'bye');
  }

  fromWorklet(msg) {
    if (msg.type === 'frame') {
      if (this.ready && this.ws?.readyState === WebSocket.OPEN) {
        this.ws.send(msg.pcm);
        this.stats.framesSent++;
      }
    } else if (msg.type === 'played') {
      this.stats.marksPlayed++;
      this.sendJson({ type: 'ack', name: msg.name });
      this.dispatchEvent(new CustomEvent('mark-played', { detail: { name: msg.name } }));
    } else if (msg.type === 'cleared') {
      this.sendJson({ type: 'cleared' });
      this.dispatchEvent(new CustomEvent('cleared'));
    }
  }

  fromServer(data) {
    if (data instanceof ArrayBuffer) {
      this.stats.audioMessagesReceived++;
      this.stats.audioBytesReceived += data.byteLength;
      this.node?.port.postMessage({ type: 'audio', pcm: data }, [data]);
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
      this.node?.port.postMessage({ type: 'mark', name: msg.name });
    } else if (msg.type === 'clear') {
      this.stats.clears++;
      this.node?.port.postMessage({ type: 'clear' });
    } else if (msg.type === 'bye') {
      this.ws?.close(1000, 'bye');
    }
  }

  sendJson(value) {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(value));
  }

  ended(code, reason) {
    this.ready = false;
    for (const track of this.media?.getTracks() ?? []) track.stop();
    this.context?.close().catch(() => {});
    this.dispatchEvent(new CustomEvent('ended', { detail: { code, reason } }));
  }
}
