/** One short sentence per catalogue language, in its own script: the eSpeak language tests and bench speak them. */
export const SENTENCES_BY_LANGUAGE: Readonly<Record<string, string>> = {
  hi: 'नमस्ते, आप कैसे हैं? मैं आपकी मदद कर सकती हूँ।',
  en: 'Hello, how are you today? I can help you with your order.',
  gu: 'નમસ્તે, તમે કેમ છો? હું તમારી મદદ કરી શકું છું.',
  mr: 'नमस्कार, तुम्ही कसे आहात? मी तुम्हाला मदत करू शकतो.',
  pa: 'ਸਤ ਸ੍ਰੀ ਅਕਾਲ, ਤੁਸੀਂ ਕਿਵੇਂ ਹੋ? ਮੈਂ ਤੁਹਾਡੀ ਮਦਦ ਕਰ ਸਕਦੀ ਹਾਂ।',
  bn: 'নমস্কার, আপনি কেমন আছেন? আমি আপনাকে সাহায্য করতে পারি।',
  ta: 'வணக்கம், நீங்கள் எப்படி இருக்கிறீர்கள்? நான் உங்களுக்கு உதவ முடியும்.',
  te: 'నమస్కారం, మీరు ఎలా ఉన్నారు? నేను మీకు సహాయం చేయగలను.',
  kn: 'ನಮಸ್ಕಾರ, ನೀವು ಹೇಗಿದ್ದೀರಿ? ನಾನು ನಿಮಗೆ ಸಹಾಯ ಮಾಡಬಲ್ಲೆ.',
  ml: 'നമസ്കാരം, സുഖമാണോ? എനിക്ക് നിങ്ങളെ സഹായിക്കാൻ കഴിയും.',
};
