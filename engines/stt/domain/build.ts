/**
 * Writes the agent-call language model (`agent-calls.lm`, ARPA) and dictionary (`agent-calls.dict`) from
 * `agent-calls.txt` and the CMU dictionary of Debian's `pocketsphinx-en-us`. Both outputs are committed; run
 * after editing the corpus:
 *
 *   node --import tsx engines/stt/domain/build.ts
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SPHINX_DEFAULTS } from '../providers/sphinx.ts';
import { arpaBigramModel, corpusSentences, pronunciations } from './language-model.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const sentences = corpusSentences(readFileSync(path.join(here, 'agent-calls.txt'), 'utf8'));
const cmudict = readFileSync(path.join(SPHINX_DEFAULTS.modelDir, 'cmudict-en-us.dict'), 'utf8');
writeFileSync(path.join(here, 'agent-calls.lm'), arpaBigramModel(sentences));
writeFileSync(path.join(here, 'agent-calls.dict'), pronunciations(sentences.flat(), cmudict));
console.log(`agent-calls: ${sentences.length} sentences, ${new Set(sentences.flat()).size} words`);
