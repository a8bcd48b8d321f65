/**
 * The scripted callers of `bench:conversation`. Each case is one web call: what the caller says (eSpeak NG
 * speech, pauses, noise bursts), when (once the agent's opening has played out, or while it plays), and which
 * category judges it. English, Hindi (Devanagari, as Deepgram writes it) and Hinglish.
 */

export type Category =
  /** A finished sentence: the agent answers soon after the caller stops. */
  | 'endpoint'
  /** A pause of up to 1 s after a connective ("so", "aur"): the agent waits for the rest. */
  | 'connective_pause'
  /** The caller talks over the agent with a stop phrase: the agent stops. */
  | 'bargein_stop_phrase'
  /** The caller talks over the agent without one: the agent stops. */
  | 'bargein'
  /** "uh-huh", "haan" over the agent: it keeps talking, without a gap. */
  | 'backchannel'
  /** A cough or a burst of line noise: nothing changes. */
  | 'noise'
  /** The caller says nothing: neither does the agent, before its re-prompt is due (6 s by default). */
  | 'silence';

export const CATEGORIES: readonly Category[] = [
  'endpoint',
  'connective_pause',
  'bargein_stop_phrase',
  'bargein',
  'backchannel',
  'noise',
  'silence',
];

export type Part =
  | { speech: string; voice: string }
  | { pauseMs: number }
  /** A burst of noise: `cough` (a decaying broadband burst) or `line` (flat hiss). */
  | { noise: 'cough' | 'line'; ms: number };

export interface ConversationCase {
  id: string;
  category: Category;
  /**
   * `after_opening`: once the agent's opening has played out and a short silence followed;
   * `during_opening`: this far into the opening's playback.
   */
  start: { after: 'opening_played' } | { intoOpeningMs: number };
  parts: readonly Part[];
}

const EN = 'en-us';
const HI = 'hi';

const speak = (text: string, voice = EN): Part => ({ speech: text, voice });
const pause = (pauseMs: number): Part => ({ pauseMs });

const AFTER = { after: 'opening_played' } as const;
/** Well into the opening, so the agent is plainly mid-sentence. */
const DURING = { intoOpeningMs: 1500 } as const;

export const CORPUS: readonly ConversationCase[] = [
  {
    id: 'endpoint-en-1',
    category: 'endpoint',
    start: AFTER,
    parts: [speak('I want to check my order status.')],
  },
  {
    id: 'endpoint-en-2',
    category: 'endpoint',
    start: AFTER,
    parts: [speak('Can you move my booking to Friday?')],
  },
  { id: 'endpoint-en-3', category: 'endpoint', start: AFTER, parts: [speak('Yes, that works for me.')] },
  { id: 'endpoint-hi-1', category: 'endpoint', start: AFTER, parts: [speak('मुझे अपना ऑर्डर देखना है।', HI)] },
  { id: 'endpoint-hi-2', category: 'endpoint', start: AFTER, parts: [speak('कल शाम को आ जाऊंगा।', HI)] },
  {
    id: 'endpoint-hinglish-1',
    category: 'endpoint',
    start: AFTER,
    parts: [speak('Mera order kab aayega?', HI)],
  },
  {
    id: 'pause-en-so-600',
    category: 'connective_pause',
    start: AFTER,
    parts: [speak('I would like to book a table for two so'), pause(600), speak('around eight tonight.')],
  },
  {
    id: 'pause-en-and-800',
    category: 'connective_pause',
    start: AFTER,
    parts: [speak('I need to change the address and'), pause(800), speak('the phone number too.')],
  },
  {
    id: 'pause-en-because-1000',
    category: 'connective_pause',
    start: AFTER,
    parts: [speak('I am calling because'), pause(1000), speak('my delivery is late.')],
  },
  {
    id: 'pause-en-umm-900',
    category: 'connective_pause',
    start: AFTER,
    parts: [speak('My order number is umm'), pause(900), speak('four five six.')],
  },
  {
    id: 'pause-hi-aur-700',
    category: 'connective_pause',
    start: AFTER,
    parts: [speak('मुझे दो टिकट चाहिए और', HI), pause(700), speak('एक कमरा भी।', HI)],
  },
  {
    id: 'pause-hinglish-matlab-1000',
    category: 'connective_pause',
    start: AFTER,
    parts: [speak('Booking cancel karni hai matlab', HI), pause(1000), speak('kal wali.', HI)],
  },
  { id: 'stop-en-1', category: 'bargein_stop_phrase', start: DURING, parts: [speak('Stop, stop.')] },
  { id: 'stop-en-2', category: 'bargein_stop_phrase', start: DURING, parts: [speak('Wait a second.')] },
  { id: 'stop-hi-1', category: 'bargein_stop_phrase', start: DURING, parts: [speak('रुको रुको।', HI)] },
  { id: 'stop-hinglish-1', category: 'bargein_stop_phrase', start: DURING, parts: [speak('Ek minute.', HI)] },
  {
    id: 'bargein-en-1',
    category: 'bargein',
    start: DURING,
    parts: [speak('Actually I need to change my booking to Friday.')],
  },
  { id: 'bargein-en-2', category: 'bargein', start: DURING, parts: [speak('No, that is not my order.')] },
  { id: 'bargein-hi-1', category: 'bargein', start: DURING, parts: [speak('मुझे कुछ और पूछना है।', HI)] },
  {
    id: 'bargein-hinglish-1',
    category: 'bargein',
    start: DURING,
    parts: [speak('Mujhe delivery date change karni hai.', HI)],
  },
  { id: 'backchannel-en-uhhuh', category: 'backchannel', start: DURING, parts: [speak('Uh-huh.')] },
  { id: 'backchannel-en-okay', category: 'backchannel', start: DURING, parts: [speak('Okay.')] },
  { id: 'backchannel-en-right', category: 'backchannel', start: DURING, parts: [speak('Right.')] },
  { id: 'backchannel-hi-haan', category: 'backchannel', start: DURING, parts: [speak('हाँ।', HI)] },
  { id: 'backchannel-hi-achha', category: 'backchannel', start: DURING, parts: [speak('अच्छा।', HI)] },
  {
    id: 'backchannel-hinglish-haanji',
    category: 'backchannel',
    start: DURING,
    parts: [speak('Haan ji.', HI)],
  },
  { id: 'noise-cough-over-agent', category: 'noise', start: DURING, parts: [{ noise: 'cough', ms: 250 }] },
  { id: 'noise-line-over-agent', category: 'noise', start: DURING, parts: [{ noise: 'line', ms: 300 }] },
  { id: 'noise-cough-quiet', category: 'noise', start: AFTER, parts: [{ noise: 'cough', ms: 250 }] },
  { id: 'noise-line-quiet', category: 'noise', start: AFTER, parts: [{ noise: 'line', ms: 400 }] },
  { id: 'silence-1', category: 'silence', start: AFTER, parts: [pause(4000)] },
  { id: 'silence-2', category: 'silence', start: AFTER, parts: [pause(4500)] },
];
