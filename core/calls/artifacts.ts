import { copyFile, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** One turn of a call's transcript as the API shows it (`GET /v2/calls/{id}/transcript`). */
export interface TranscriptEntry {
  speaker: 'agent' | 'caller';
  text: string;
  /** Milliseconds from the moment media went live. */
  start_ms: number;
  end_ms: number;
  /** The agent was cut off by the caller; `text` is what the caller heard. */
  interrupted: boolean;
  /**
   * Caller turns: whether words were recognised. False: the caller spoke from `start_ms` to `end_ms` but no
   * speech-to-text gave words for it (none serves the call's language, or it failed); `text` is empty.
   */
  recognized?: boolean;
  /** The flow node the agent spoke from, for flow agents. */
  node?: string;
}

/**
 * Where a call's transcript and two-channel recording are kept once the call ended. The gateway that ran the
 * call writes them; the API reads them. The disk implementation needs `DATA_DIR/recordings` to be shared
 * between gateway and API nodes when they run on different machines (one volume in docker-compose.yml).
 */
export interface CallArtifacts {
  saveTranscript(workspaceId: string, callId: string, turns: readonly TranscriptEntry[]): Promise<void>;
  /** Undefined when the call has no transcript (never connected, or deleted after retention). */
  readTranscript(workspaceId: string, callId: string): Promise<TranscriptEntry[] | undefined>;
  /** A WAV file: caller on the left channel, agent on the right. */
  saveRecording(workspaceId: string, callId: string, wav: Uint8Array): Promise<void>;
  /** Moves a finished WAV file (written by the recorder as the call went) in as the call's recording. */
  adoptRecording(workspaceId: string, callId: string, file: string): Promise<void>;
  /** The recording's bytes, or undefined when there is none. */
  readRecording(workspaceId: string, callId: string): Promise<Uint8Array | undefined>;
  /** Size in bytes of the recording, or undefined when there is none. */
  recordingSize(workspaceId: string, callId: string): Promise<number | undefined>;
}

/** Ids reach file names: only the platform's own id shape is accepted, so no path can be smuggled in. */
const SAFE_ID = /^[a-z]+_[0-9A-HJKMNP-TV-Z]{26}$/;

function checkId(kind: string, id: string): string {
  if (!SAFE_ID.test(id)) throw new RangeError(`not a ${kind} id: ${JSON.stringify(id.slice(0, 40))}`);
  return id;
}

/** Files under `dir/<workspace id>/<call id>.{json,wav}`, each written to a temporary name and renamed. */
export class DiskCallArtifacts implements CallArtifacts {
  constructor(private readonly dir: string) {}

  async saveTranscript(
    workspaceId: string,
    callId: string,
    turns: readonly TranscriptEntry[],
  ): Promise<void> {
    await this.write(this.file(workspaceId, callId, 'transcript.json'), JSON.stringify(turns));
  }

  async readTranscript(workspaceId: string, callId: string): Promise<TranscriptEntry[] | undefined> {
    const text = await readOrUndefined(this.file(workspaceId, callId, 'transcript.json'), 'utf8');
    return text === undefined ? undefined : (JSON.parse(text) as TranscriptEntry[]);
  }

  async saveRecording(workspaceId: string, callId: string, wav: Uint8Array): Promise<void> {
    await this.write(this.file(workspaceId, callId, 'wav'), wav);
  }

  async adoptRecording(workspaceId: string, callId: string, file: string): Promise<void> {
    const target = this.file(workspaceId, callId, 'wav');
    await mkdir(path.dirname(target), { recursive: true });
    try {
      await rename(file, target);
    } catch (error) {
      // Another file system (a shared recordings volume): copy, then drop the original.
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      await copyFile(file, `${target}.${process.pid}.tmp`);
      await rename(`${target}.${process.pid}.tmp`, target);
      await rm(file, { force: true });
    }
  }

  async readRecording(workspaceId: string, callId: string): Promise<Uint8Array | undefined> {
    return readOrUndefined(this.file(workspaceId, callId, 'wav'));
  }

  async recordingSize(workspaceId: string, callId: string): Promise<number | undefined> {
    try {
      return (await stat(this.file(workspaceId, callId, 'wav'))).size;
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  private file(workspaceId: string, callId: string, extension: string): string {
    return path.join(this.dir, checkId('workspace', workspaceId), `${checkId('call', callId)}.${extension}`);
  }

  private async write(file: string, data: string | Uint8Array): Promise<void> {
    await mkdir(path.dirname(file), { recursive: true });
    const temporary = `${file}.${process.pid}.tmp`;
    await writeFile(temporary, data, { mode: 0o600 });
    await rename(temporary, file);
  }
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

async function readOrUndefined(file: string): Promise<Uint8Array | undefined>;
async function readOrUndefined(file: string, encoding: 'utf8'): Promise<string | undefined>;
async function readOrUndefined(file: string, encoding?: 'utf8'): Promise<Uint8Array | string | undefined> {
  try {
    return encoding ? await readFile(file, encoding) : new Uint8Array(await readFile(file));
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}
