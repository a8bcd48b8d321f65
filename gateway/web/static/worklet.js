// AudioWorklet processor of the web-call client (see ../PROTOCOL.md). Runs in the audio rendering thread of an
// AudioContext created at the call's wire rate (16 kHz for PCM16, 48 kHz for Opus):
// - capture: collects the microphone's 128-sample render quanta into 20 ms frames of PCM16 and posts them
//   ({type:'frame', pcm: ArrayBuffer}) to the main thread, which sends them as binary WebSocket messages (as
//   they are, or encoded to Opus);
// - playback: plays agent audio posted to it as PCM16 at the context's rate ({type:'audio', pcm: ArrayBuffer};
//   Opus is decoded on the main thread first) in order, reports each mark ({type:'mark', name}) when the audio
//   before it has been played ({type:'played', name}), and on {type:'clear'} drops everything queued and
//   answers {type:'cleared'}.

class WebCallProcessor extends AudioWorkletProcessor {
  constructor(options) {
    super();
    const frameSamples = options.processorOptions?.frameSamples ?? 320;
    this.capture = new Int16Array(frameSamples);
    this.captureFill = 0;
    /** Items: {samples: Int16Array, offset: number} or {mark: string}. */
    this.queue = [];
    this.queuedSamples = 0;
    this.port.onmessage = (event) => this.onMessage(event.data);
  }

  onMessage(msg) {
    if (msg.type === 'audio') {
      const samples = new Int16Array(msg.pcm);
      this.queue.push({ samples, offset: 0 });
      this.queuedSamples += samples.length;
    } else if (msg.type === 'mark') {
      this.queue.push({ mark: msg.name });
    } else if (msg.type === 'clear') {
      this.queue = [];
      this.queuedSamples = 0;
      this.port.postMessage({ type: 'cleared' });
    }
  }

  process(inputs, outputs) {
    const input = inputs[0]?.[0];
    if (input) this.captureQuantum(input);
    const output = outputs[0]?.[0];
    if (output) this.playQuantum(output);
    return true;
  }

  captureQuantum(input) {
    for (let i = 0; i < input.length; i++) {
      const s = Math.max(-1, Math.min(1, input[i]));
      this.capture[this.captureFill++] = s < 0 ? Math.round(s * 32768) : Math.round(s * 32767);
      if (this.captureFill === this.capture.length) {
        const frame = this.capture.slice();
        this.port.postMessage({ type: 'frame', pcm: frame.buffer }, [frame.buffer]);
        this.captureFill = 0;
      }
    }
  }

  playQuantum(output) {
    let written = 0;
    while (written < output.length) {
      const head = this.queue[0];
      if (!head) break;
      if (head.mark !== undefined) {
        this.queue.shift();
        this.port.postMessage({ type: 'played', name: head.mark });
        continue;
      }
      const take = Math.min(output.length - written, head.samples.length - head.offset);
      for (let i = 0; i < take; i++) output[written + i] = head.samples[head.offset + i] / 32768;
      head.offset += take;
      written += take;
      this.queuedSamples -= take;
      if (head.offset === head.samples.length) this.queue.shift();
    }
    // Marks right after the last audio are reported at once, not one quantum later.
    while (this.queue[0]?.mark !== undefined)
      this.port.postMessage({ type: 'played', name: this.queue.shift().mark });
    if (written < output.length) output.fill(0, written);
  }
}

registerProcessor('web-call-io', WebCallProcessor);
