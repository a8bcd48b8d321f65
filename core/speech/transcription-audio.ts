import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isId } from '../ids.ts';

/**
 * The audio of transcription jobs, on disk: `dir/<workspace id>/<trn id>.audio`, written to a temporary name and
 * renamed, so a reader never sees half a file. API and worker nodes on different machines must share the
 * directory (as they share `DATA_DIR/recordings`).
 */
export class TranscriptionAudio {
  constructor(private readonly dir: string) {}

  async save(workspaceId: string, id: string, bytes: Uint8Array): Promise<void> {
    const file = this.fileOf(workspaceId, id);
    await mkdir(path.dirname(file), { recursive: true });
    const temporary = `${file}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(temporary, bytes);
    await rename(temporary, file);
  }

  /** The audio, or undefined when there is none (a job from a URL not fetched yet, or deleted). */
  async read(workspaceId: string, id: string): Promise<Buffer | undefined> {
    try {
      return await readFile(this.fileOf(workspaceId, id));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async remove(workspaceId: string, id: string): Promise<void> {
    await rm(this.fileOf(workspaceId, id), { force: true });
  }

  private fileOf(workspaceId: string, id: string): string {
    if (!isId('workspace', workspaceId) || !isId('transcription', id))
      throw new RangeError('not a workspace and transcription id');
    return path.join(this.dir, workspaceId, `${id}.audio`);
  }
}
