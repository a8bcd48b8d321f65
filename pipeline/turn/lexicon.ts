/**
 * The caller's words as turn-taking needs them, in English, Hindi, Hinglish and Gujarati: which utterances are
 * backchannels ("haan", "ok", "hmm"), which phrases mean "stop" ("ruko", "wait", "ek minute"), which trailing
 * words mean the caller has not finished ("aur", "but", "matlab", "umm").
 *
 * STT output comes in romanized form ("haan ji") or in the native script ("हाँ जी", "હા"). `normalizeWords`
 * turns both into the same romanized tokens: the native spellings listed below map to their romanized word;
 * other native words are kept as they are (they still count as words). Matching then compares "keys": the
 * token with runs of a repeated letter collapsed to one, so that spelling and elongation variants meet
 * ("haan", "haaan", "han"; "hmm", "hmmmm"; "achha", "accha", "acha"; "okkk", "ok").
 */

/** A list written as one string: phrases separated by commas (keeps the lists readable and compact). */
function list(text: string): string[] {
  return text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
}

/** Backchannels: on their own, a listener's acknowledgements, not a bid for the turn. */
const BACKCHANNELS = [
  ...list('ok, okay, right, hmm, mm, mhm, mm hmm, uh huh, yes, yeah, yep, yup, alright, i see'),
  ...list('haan, haan ji, ji haan, ha, ji, achha, acha, theek hai, thik hai, theek, thik, sahi, sahi hai'),
  ...list('barabar, barabar hai, hmm hmm'),
  // Gujarati, romanized: "saru" = fine, "che" = is
  ...list('barabar che, saru, saru che, theek che, thik che'),
];

/** Phrases that always ask the agent to stop, wherever they appear in what the caller says. */
const STOP_PHRASES = [
  ...list('stop, wait, hold on, no, one minute, one second, excuse me'),
  ...list('ruko, ruk, rukiye, nahi, nahin, suniye, suno, ek minute, ek min, band karo'),
  // Gujarati, romanized: "roko" = stop, "ubha raho" = wait, "sambhlo" = listen
  ...list('roko, ubha raho, sambhlo'),
];

/**
 * Words after which a caller who pauses is usually still going: conjunctions and fillers. "to" is both
 * English ("I want to") and the common spelling of Hindi "toh"; either way the sentence is unfinished.
 */
const CONTINUATIONS = [
  ...list('and, but, so, or, because, umm, um, uh, er, to'),
  ...list('aur, ki, ke, toh, matlab, lekin, kyunki'),
  // Gujarati, romanized: "ane" = and, "pan" = but, "etle" = so
  ...list('ane, pan, etle'),
];
/**
 * Words that leave a clause incomplete when they come last: articles, possessives and prepositions ("a table
 * for", "my"), Hindi postpositions ("do log ka", "shaam ko", "Delhi se"), Gujarati case endings written apart
 * ("Surat ma", "ghar thi"). Not auxiliaries: "yes it is" and "haan hai" end sentences. Not "wala", "wali",
 * "wale" either: "kal wali", "blue wala", "yeh wale" are whole answers.
 */
const INCOMPLETE_CLAUSE_ENDINGS = [
  ...list('a, an, the, my, your, our, their, for, with, at, of, from, about, into, than, between, like'),
  ...list('ka, ko, se, mein, par'),
  // Gujarati, romanized: "ma" = in, "thi" = from, "nu"/"ni" = of
  ...list('ma, thi, nu, ni'),
];

/**
 * Closing phrases: said last, the caller has finished, even when the STT wrote no full stop ("thank you",
 * "bas itna hi", "aavjo").
 */
const CLOSINGS = [
  ...list("thank you, thanks, thanks a lot, bye, goodbye, that's all, that is all, that's it"),
  ...list('dhanyavaad, dhanyavad, shukriya, bas, bas itna hi, bas itna, alvida'),
  // Gujarati, romanized: "aavjo" = goodbye, "aabhar" = thanks
  ...list('aavjo, aabhar'),
];

/** Words whose key collides with a continuation but that end a sentence ("me too" -> key "to"). */
const NOT_CONTINUATIONS = new Set(['too']);

/**
 * Native spellings (Devanagari, Gujarati) of the words above, "native roman" pairs. Not "हम" (Hindi "we")
 * for "hmm". Gujarati "ના" is "no"; romanized "na" is left alone (a Hindi tag particle: "haan na").
 */
const NATIVE = list(
  'हाँ haan, हा ha, जी ji, अच्छा achha, ठीक theek, है hai, बराबर barabar, सही sahi, हम्म hmm, हम्मम hmm, ' +
    'ओके ok, यस yes, येस yes, राइट right, रुको ruko, रुक ruk, रुकिए rukiye, रुकिये rukiye, नहीं nahin, ' +
    'नही nahi, सुनिए suniye, सुनिये suniye, सुनो suno, एक ek, मिनट minute, बंद band, करो karo, स्टॉप stop, ' +
    'स्टोप stop, वेट wait, नो no, होल्ड hold, ऑन on, और aur, कि ki, के ke, तो toh, मतलब matlab, लेकिन lekin, ' +
    'क्योंकि kyunki, उम्म umm, अम्म umm, का ka, को ko, से se, में mein, पर par, वाला wala, वाली wali, ' +
    'वाले wale, धन्यवाद dhanyavaad, शुक्रिया shukriya, बस bas, ' +
    'હા ha, હાં haan, જી ji, બરાબર barabar, સારું saru, સારુ saru, ઠીક theek, છે che, ઓકે ok, હમ્મ hmm, ' +
    'અચ્છા achha, ના no, નહીં nahin, નહિ nahi, રોકો roko, ઊભા ubha, રહો raho, સાંભળો sambhlo, એક ek, ' +
    'મિનિટ minute, બંધ band, કરો karo, સ્ટોપ stop, વેઇટ wait, અને ane, પણ pan, તો toh, કે ke, એટલે etle, ' +
    'માં ma, થી thi, નું nu, ની ni, આવજો aavjo, આભાર aabhar',
).map((pair) => pair.split(' ') as [string, string]);

/** Longest phrase in the lists, in words. */
const MAX_PHRASE_WORDS = 3;

/** One spelling per script for marks that STT engines write either way. */
function canonicalScript(text: string): string {
  return (
    text
      .normalize('NFC')
      .toLowerCase()
      // chandrabindu -> anusvara (हाँ / हां; Gujarati હાઁ / હાં)
      .replace(/\u0901/g, '\u0902')
      .replace(/\u0A81/g, '\u0A82')
      // nukta (ओक़े), zero-width joiners
      .replace(/[\u093C\u0ABC\u200C\u200D]/g, '')
      // typographic apostrophes
      .replace(/[\u2018\u2019]/g, "'")
  );
}

const NATIVE_TOKENS = new Map(NATIVE.map(([native, roman]) => [canonicalScript(native), roman]));

/** Words of an utterance: lowercased, punctuation dropped, native spellings of known words romanized. */
export function normalizeWords(text: string): string[] {
  const words: string[] = [];
  for (const raw of canonicalScript(text).split(/[^\p{L}\p{M}\p{N}']+/u)) {
    const token = raw.replace(/^'+|'+$/g, '');
    if (token) words.push(NATIVE_TOKENS.get(token) ?? token);
  }
  return words;
}

/** Matching key of a word: runs of one repeated letter collapsed ("haaan" -> "han", "hmmm" -> "hm"). */
export function wordKey(word: string): string {
  return word.replace(/(\p{L})\1+/gu, '$1');
}

function phraseKeys(phrases: readonly string[]): Set<string> {
  return new Set(phrases.map((p) => normalizeWords(p).map(wordKey).join(' ')));
}

const BACKCHANNEL_KEYS = phraseKeys(BACKCHANNELS);
const STOP_KEYS = phraseKeys(STOP_PHRASES);
const CONTINUATION_KEYS = phraseKeys(CONTINUATIONS);
const INCOMPLETE_KEYS = phraseKeys(INCOMPLETE_CLAUSE_ENDINGS);
const CLOSING_KEYS = phraseKeys(CLOSINGS);

/** Whether the words, all of them, are backchannels (one or several: "haan haan", "ok theek hai ji"). */
export function isBackchannel(words: readonly string[]): boolean {
  if (words.length === 0) return false;
  const keys = words.map(wordKey);
  // reachable[i]: keys[0..i) split into backchannel phrases.
  const reachable = new Array<boolean>(keys.length + 1).fill(false);
  reachable[0] = true;
  for (let i = 0; i < keys.length; i++) {
    if (!reachable[i]) continue;
    for (let n = 1; n <= MAX_PHRASE_WORDS && i + n <= keys.length; n++) {
      if (BACKCHANNEL_KEYS.has(keys.slice(i, i + n).join(' '))) reachable[i + n] = true;
    }
  }
  return reachable[keys.length] === true;
}

/** The first stop phrase anywhere in the words (as it was said, normalized), or null. */
export function findStopPhrase(words: readonly string[]): string | null {
  const keys = words.map(wordKey);
  for (let i = 0; i < keys.length; i++) {
    for (let n = MAX_PHRASE_WORDS; n >= 1; n--) {
      if (i + n <= keys.length && STOP_KEYS.has(keys.slice(i, i + n).join(' '))) {
        return words.slice(i, i + n).join(' ');
      }
    }
  }
  return null;
}

/** The last word when it is a conjunction or filler (the caller is likely to go on), else null. */
export function trailingContinuation(words: readonly string[]): string | null {
  const last = words[words.length - 1];
  if (last === undefined || NOT_CONTINUATIONS.has(last)) return null;
  return CONTINUATION_KEYS.has(wordKey(last)) ? last : null;
}

/** The last word when it leaves the clause incomplete ("for", "the", "ko", "ma"), else null. */
export function trailingIncompleteClause(words: readonly string[]): string | null {
  const last = words[words.length - 1];
  if (last === undefined) return null;
  return INCOMPLETE_KEYS.has(wordKey(last)) ? last : null;
}

/** Whether the words end with a closing phrase ("thank you", "that's all", "dhanyavaad", "aavjo"). */
export function endsWithClosing(words: readonly string[]): boolean {
  const keys = words.map(wordKey);
  for (let n = 1; n <= MAX_PHRASE_WORDS && n <= keys.length; n++) {
    if (CLOSING_KEYS.has(keys.slice(keys.length - n).join(' '))) return true;
  }
  return false;
}

/** Whether the text ends a sentence: . ? ! or the danda (।, ॥), maybe followed by closing quotes; not "...". */
export function endsSentence(text: string): boolean {
  const trimmed = text.trimEnd().replace(/["'\u201D\u2019)\]]+$/u, '');
  if (/(\.\.\.|\u2026)$/u.test(trimmed)) return false;
  return /[.?!\u0964\u0965\u061F]$/u.test(trimmed);
}
