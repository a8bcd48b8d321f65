import type { Speaker } from '../reply.ts';

/** One synthesis as the session asked for it, and the audio it got. */
export interface Synthesis {
  text: string;
  chunks: Int16Array[];
  samples: number;
}

/**
 * Wraps the agent's speaker and keeps what each synthesis produced (eSpeak varies its voice slightly from one
 * synthesis to the next, so a test compares what the caller heard with what this turn's speech produced, not
 * with a fresh synthesis). Can be told to fail syntheses, to stand in for a broken engine.
 */
export class RecordingSpeaker implements Speaker {
  readonly syntheses: Synthesis[] = [];

  constructor(private readonly inner: Speaker) {}

  async *synthesize(request: Parameters<Speaker['synthesize']>[0]): AsyncGenerator<Int16Array> {
    const record: Synthesis = { text: request.text, chunks: [], samples: 0 };
    this.syntheses.push(record);
    for await (const chunk of this.inner.synthesize(request)) {
      record.chunks.push(chunk);
      record.samples += chunk.length;
      yield chunk;
    }
  }

  /** The audio of the first synthesis of `text`, joined. */
  audioOf(text: string): Int16Array {
    const found = this.syntheses.find((s) => s.text === text);
    const out = new Int16Array(found?.samples ?? 0);
    let at = 0;
    for (const chunk of found?.chunks ?? []) {
      out.set(chunk, at);
      at += chunk.length;
    }
    return out;
  }
}
