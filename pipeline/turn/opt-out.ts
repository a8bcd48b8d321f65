/**
 * Whether a caller's turn clearly asks not to be called again, in English, Hindi (Devanagari) or Hinglish
 * (Hindi in Latin letters). Clear means a request about future calls: "don't call me again", "stop calling
 * me", "remove my number", "dobara call mat karna", "मुझे कॉल मत करो". A request about now ("don't call me
 * now, call me later", "abhi call mat karo, shaam ko karna") is not an opt-out: a turn that names a later
 * time is left to the conversation unless it also says again/never.
 */

const ENGLISH = [
  /\b(never|don'?t|do not|stop)\s+(ever\s+)?call(ing)?\s+(me|us|this number|my number)\s+(again|anymore|any more|ever)\b/,
  /\bstop calling (me|us|this number|my number)\b/,
  /\bnever call (me|us|this number) again\b/,
  /\b(remove|delete|take off) (my|this) (phone )?number\b/,
  /\btake (me|my number|this number) off (your|the|this) (call(ing)? )?list\b/,
  /\b(do not|don'?t) call list\b/,
  /\bunsubscribe\b/,
  /\b(don'?t|do not) (want|need) (any )?(more |these |your |such )?calls\b/,
];

const HINGLISH = [
  /\b(dobara|dubara|phir se|fir se|kabhi bhi|kabhi)\b.*\b(call|phone|fone)\b.*\bmat\b/,
  /\b(call|phone|fone)\b.*\bmat\b.*\b(karo|karna|kijiye|kariye|karein|karen|kare)\b/,
  /\b(mera|hamara|humara|ye|yeh)\s+number\b.*\b(hata|hatao|hata do|hatado|delete|nikal|nikalo)\b/,
  /\b(call|calls|phone)\b.*\bnahi?n? chahiye\b/,
  /\b(call|calls|phone)\b.*\bband karo\b/,
];

const HINDI = [
  /(दोबारा|दुबारा|फिर से|फिरसे|कभी).*(कॉल|काल|फोन|फ़ोन).*मत/,
  /(कॉल|काल|फोन|फ़ोन).*मत.*(करो|करना|कीजिए|कीजिये|करिए|करें|करे)/,
  /(मेरा|हमारा|ये|यह)\s*नंबर.*(हटा|डिलीट|निकाल)/,
  /(कॉल|काल|फोन|फ़ोन).*नहीं\s*चाहिए/,
  /(कॉल|काल|फोन|फ़ोन).*बंद\s*कर/,
];

/** Words for a later time: "call me later" is not "never call me". */
const LATER =
  /\b(later|tomorrow|evening|morning|afternoon|next week|after|baad|kal|shaam|sham|subah|abhi)\b|बाद|कल|शाम|सुबह|अभी/;
/** Words that make it about every future call even when a time is named. */
const EVER =
  /\b(again|anymore|any more|never|ever|dobara|dubara|kabhi|phir se|fir se)\b|दोबारा|दुबारा|कभी|फिर से/;

export function isOptOutRequest(text: string): boolean {
  const said = text.toLowerCase().replace(/[’`]/g, "'").replace(/\s+/g, ' ');
  const asks = [...ENGLISH, ...HINGLISH, ...HINDI].some((pattern) => pattern.test(said));
  if (!asks) return false;
  return !LATER.test(said) || EVER.test(said);
}

/** What the agent says before it ends the call, in the voice's language (English for the rest). */
const GOODBYES: Readonly<Record<string, string>> = {
  en: 'Understood. We will not call you again. Goodbye.',
  hi: 'ठीक है, हम आपको दोबारा कॉल नहीं करेंगे। धन्यवाद।',
  gu: 'સમજાયું, અમે તમને ફરી કૉલ નહીં કરીએ. આભાર.',
  mr: 'ठीक आहे, आम्ही तुम्हाला पुन्हा कॉल करणार नाही. धन्यवाद.',
  bn: 'ঠিক আছে, আমরা আপনাকে আর কল করব না। ধন্যবাদ।',
};

export function optOutGoodbyeLine(language: string): string {
  const primary = language.toLowerCase().split('-')[0] ?? 'en';
  return GOODBYES[primary] ?? (GOODBYES.en as string);
}
