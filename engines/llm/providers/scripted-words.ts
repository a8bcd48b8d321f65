/**
 * The word rules of the scripted dialog engine, all deterministic:
 *
 * 1. Words: lower-cased; "n't" becomes " not"; every character that is not a letter, a combining mark or a digit
 *    (any script, so Devanagari and Hinglish both survive) separates words.
 * 2. Canonical forms: yes-words (yes, yeah, haan, ok, theek, bilkul, ...) become `yes`; no-words (no, not, nahi,
 *    nope, ...) become `no`; thanks-words (thanks, dhanyavaad, shukriya) become `thank`.
 * 3. Stop-words (English and Hinglish function words, and the words every edge condition shares: caller, user,
 *    customer, agent, says, wants) are removed.
 * 4. Light stemming of Latin-script words: one ending of -ing, -ed, -es, -s, then a final -e, each only when at
 *    least three letters remain ("booking", "booked", "books" -> "book"; "agreed", "agrees" -> "agre").
 * 5. Overlap score of caller words U and condition words D (as sets): |U ∩ D| / sqrt(|U| * |D|) (cosine), and 0
 *    when one side says `yes` and the other `no` without the other word (a yes never takes a no-edge).
 */

const STOP_WORDS = new Set(
  (
    'a an the and or but if then so to of in on at for with from by about as into onto over under than that ' +
    'this these those there here it its is are was were be been being am do does did done have has had having ' +
    'i me my mine myself we us our you your yours he him his she her they them their what which who whom whose ' +
    'when where why how can could will would shall should may might must just also very too really please ' +
    'some any all each every both more most other such only own same again further once now up down out off ' +
    'let get got go going would like hi hello hey um uh hmm well oh ' +
    'caller callers user customer agent person someone say says said tell tells told mention mentions want ' +
    'wants wanted ' +
    'hai hain ho tha thi the ka ki ke ko se me mein main mera meri mere mujhe hum humko aap aapka aapki tum ' +
    'ye yeh wo woh vo kya to toh bhi aur par pe ek ji na hi itna abhi kuch wala wali'
  ).split(' '),
);

const CANONICAL = new Map<string, string>([
  ...['yes', 'yeah', 'yep', 'yup', 'sure', 'haan', 'han', 'haa', 'haanji', 'ok', 'okay', 'theek', 'thik']
    .concat(['bilkul', 'sahi', 'correct', 'hanji', 'ha'])
    .map((word): [string, string] => [word, 'yes']),
  ...['no', 'not', 'nope', 'nah', 'nahi', 'nahin', 'nai', 'mat', 'never'].map((word): [string, string] => [
    word,
    'no',
  ]),
  ...['thank', 'thanks', 'thankyou', 'dhanyavaad', 'dhanyavad', 'dhanyawad', 'dhanyawaad', 'shukriya'].map(
    (word): [string, string] => [word, 'thank'],
  ),
]);

/** Words that close a conversation ("bas" is Hindi for "that's enough"). */
const FAREWELL_WORDS = new Set(
  ['bye', 'goodbye', 'thank', 'alvida', 'bas', 'tata'].map((word) => stem(word)),
);

/** A farewell may carry this many other content words ("thanks for the information, bye"). */
const FAREWELL_OTHER_WORDS_MAX = 1;

/** The raw words of a text, rule 1. */
export function rawWords(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/n['’]t\b/g, ' not')
    .split(/[^\p{L}\p{M}\p{N}]+/u)
    .filter((word) => word !== '');
}

/** The content words of a text after rules 1-4, in order (duplicates kept). */
export function contentWords(text: string): string[] {
  const out: string[] = [];
  for (const raw of rawWords(text)) {
    const word = CANONICAL.get(raw) ?? raw;
    if (STOP_WORDS.has(word)) continue;
    out.push(stem(word));
  }
  return out;
}

export function stem(word: string): string {
  if (!/^[a-z]+$/.test(word)) return word;
  let out = word;
  for (const ending of ['ing', 'ed', 'es', 's']) {
    if (out.endsWith(ending) && out.length - ending.length >= 3 && !out.endsWith('ss')) {
      out = out.slice(0, -ending.length);
      break;
    }
  }
  if (out.endsWith('e') && out.length - 1 >= 3) out = out.slice(0, -1);
  return out;
}

/** Rule 5: how well the caller's words fit an edge condition, 0 to 1. */
export function overlapScore(callerWords: readonly string[], conditionWords: readonly string[]): number {
  const caller = new Set(callerWords);
  const condition = new Set(conditionWords);
  if (caller.size === 0 || condition.size === 0) return 0;
  if (polarity(caller) !== 0 && polarity(caller) === -polarity(condition)) return 0;
  let shared = 0;
  for (const word of caller) if (condition.has(word)) shared++;
  return shared / Math.sqrt(caller.size * condition.size);
}

/** 1 for yes only, -1 for no only, 0 for neither or both. */
function polarity(words: ReadonlySet<string>): number {
  return (words.has('yes') ? 1 : 0) - (words.has('no') ? 1 : 0);
}

/**
 * Whether the caller is saying goodbye: at least one farewell word, and at most one content word besides the
 * farewell, yes and no words ("ok thank you bye", "bas", "dhanyavaad ji"; not "thanks, I want to book a table").
 */
export function isFarewell(text: string): boolean {
  const words = contentWords(text);
  const farewell = words.filter((word) => FAREWELL_WORDS.has(word));
  const others = words.filter((word) => !FAREWELL_WORDS.has(word) && word !== 'yes' && word !== 'no');
  return farewell.length > 0 && others.length <= FAREWELL_OTHER_WORDS_MAX;
}

/** The first sentence of a text, whitespace collapsed; sentences end at . ! ? or the Devanagari danda. */
export function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const end = flat.search(/[.!?।](\s|$)/u);
  return end === -1 ? flat : flat.slice(0, end + 1);
}
