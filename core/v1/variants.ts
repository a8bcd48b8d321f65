import type { AssistantDocument, VariantConfig, VariantType } from './assistant.ts';

/**
 * The five v1 variants as call templates of Indian e-commerce shops. Each template is the brief of one real
 * call a shop places, filled from the variant's config (payment plan and COD fee, link validity, delivery
 * window, reschedule days, support contacts); the order's facts come from the call's `payload` as `{{name}}`
 * placeholders (see README "Legacy v1"), which the call's variables fill. Hinglish when `icpContext.language`
 * says so: Hindi words in Roman script mixed with English, the way shoppers text.
 */

export type Register = 'english' | 'hinglish' | 'hindi';

interface Contacts {
  phoneNumber?: string | undefined;
  email?: string | undefined;
}

/** How an `icpContext.language` value speaks, and which BCP-47 language the agent's voice and STT use. */
export function languageOf(value: string): { register: Register; language: string } {
  const key = value.trim().toLowerCase();
  if (key === 'hinglish') return { register: 'hinglish', language: 'hi-IN' };
  if (key === 'hindi' || key === 'hi' || key === 'hi-in') return { register: 'hindi', language: 'hi-IN' };
  const named: Record<string, string> = {
    english: 'en-IN',
    tamil: 'ta-IN',
    telugu: 'te-IN',
    marathi: 'mr-IN',
    bengali: 'bn-IN',
    gujarati: 'gu-IN',
    kannada: 'kn-IN',
    malayalam: 'ml-IN',
    punjabi: 'pa-IN',
  };
  if (named[key]) return { register: 'english', language: named[key] };
  if (/^[a-z]{2}-[a-z]{2}$/.test(key))
    return { register: 'english', language: `${key.slice(0, 2)}-${key.slice(3).toUpperCase()}` };
  return { register: 'english', language: 'en-IN' };
}

function contactLine(contacts: Contacts | undefined, register: Register): string {
  const parts = [contacts?.phoneNumber, contacts?.email].filter((p): p is string => Boolean(p));
  if (parts.length === 0) return '';
  return register === 'english'
    ? `If the customer needs help beyond this call, give them our support contact: ${parts.join(' or ')}.`
    : `Agar customer ko aur help chahiye, toh support contact dein: ${parts.join(' ya ')}.`;
}

function rupees(amount: number): string {
  return `₹${amount.toLocaleString('en-IN')}`;
}

type Brief = (config: VariantConfig, register: Register) => string[];

const BRIEFS: Record<VariantType, Brief> = {
  abandoned_cart: (config, register) => {
    const plan = config.abandoned_cart?.paymentPlan;
    const mode = plan?.mode ?? 'online';
    const codFee = plan?.additionalFee?.cod;
    const en = [
      'Call type: abandoned cart recovery for {{storeName}}.',
      '{{customerName}} added {{productName}} (cart value {{cartValue}}) to the cart but did not complete checkout.',
      'Find out politely what stopped them (price, delivery time, payment trouble, just browsing) and help them finish the order.',
      mode === 'online'
        ? 'Payment is online only (UPI, cards, net banking); offer to send the checkout link {{checkoutLink}} on WhatsApp or SMS.'
        : mode === 'cod'
          ? 'Cash on delivery is available for this order.'
          : 'The customer may pay online or choose cash on delivery.',
      ...(codFee !== undefined && mode !== 'online'
        ? [
            `Cash on delivery carries an extra fee of ${rupees(codFee)}; paying online avoids it, say so if they hesitate.`,
          ]
        : []),
      'Never pressure them; if they are not interested, thank them and end the call.',
    ];
    const hi = [
      'Call type: {{storeName}} ke liye abandoned cart recovery.',
      '{{customerName}} ne {{productName}} (cart value {{cartValue}}) cart mein add kiya tha, lekin checkout complete nahi kiya.',
      'Politely poochiye ki kya problem aayi (price, delivery time, payment issue, ya bas dekh rahe the) aur order complete karne mein help kijiye.',
      mode === 'online'
        ? 'Payment sirf online hai (UPI, card, net banking); checkout link {{checkoutLink}} WhatsApp ya SMS pe bhejne ka offer kijiye.'
        : mode === 'cod'
          ? 'Is order pe cash on delivery available hai.'
          : 'Customer online pay kar sakte hain ya cash on delivery choose kar sakte hain.',
      ...(codFee !== undefined && mode !== 'online'
        ? [
            `Cash on delivery pe ${rupees(codFee)} extra fee lagti hai; online pay karne pe yeh fee nahi lagegi, hesitate karein toh bataiye.`,
          ]
        : []),
      'Pressure bilkul mat kijiye; interest na ho toh thank you bol ke call end kijiye.',
    ];
    return [
      ...(register === 'english' ? en : hi),
      contactLine(config.abandoned_cart?.supportContacts, register),
    ];
  },
  cod_to_prepaid: (config, register) => {
    const c = config.cod_to_prepaid;
    const validity = c?.paymentLinkValidity;
    const fee = c?.codFee;
    const en = [
      'Call type: convert a cash-on-delivery order of {{storeName}} to prepaid.',
      '{{customerName}} placed order {{orderId}} for {{orderAmount}} with cash on delivery.',
      'Offer to switch it to prepaid: we send a payment link {{paymentLink}} by SMS and WhatsApp now.',
      ...(validity !== undefined ? [`The payment link is valid for ${validity} minutes.`] : []),
      ...(fee !== undefined
        ? [`Paying now saves the ${rupees(fee)} cash-on-delivery fee, and the order ships faster.`]
        : ['Paying now means the order ships faster and they need no cash at the door.']),
      'If they prefer cash on delivery, confirm the order stays COD; never cancel it.',
    ];
    const hi = [
      'Call type: {{storeName}} ke cash-on-delivery order ko prepaid mein convert karna.',
      '{{customerName}} ne order {{orderId}} ({{orderAmount}}) cash on delivery pe place kiya hai.',
      'Prepaid karne ka offer dijiye: hum abhi SMS aur WhatsApp pe payment link {{paymentLink}} bhejte hain.',
      ...(validity !== undefined ? [`Payment link ${validity} minute tak valid rahega.`] : []),
      ...(fee !== undefined
        ? [`Abhi pay karne pe ${rupees(fee)} ki COD fee bachegi aur order jaldi ship hoga.`]
        : ['Abhi pay karne pe order jaldi ship hoga aur delivery pe cash nahi chahiye.']),
      'Agar woh COD hi chahte hain, toh confirm kijiye ki order COD hi rahega; order kabhi cancel mat kijiye.',
    ];
    return [...(register === 'english' ? en : hi), contactLine(c?.supportContacts, register)];
  },
  address_verification: (config, register) => {
    const c = config.address_verification;
    const window =
      c?.minDays !== undefined && c?.maxDays !== undefined
        ? register === 'english'
          ? `Delivery is expected in ${c.minDays} to ${c.maxDays} days.`
          : `Delivery ${c.minDays} se ${c.maxDays} din mein expected hai.`
        : '';
    const en = [
      'Call type: verify the delivery address of an order from {{storeName}}.',
      '{{customerName}} ordered {{productName}} (order {{orderId}}) to: {{address}}, pincode {{pincode}}.',
      'Read the address back and confirm it, including house number, landmark and pincode; note any correction exactly.',
      window,
      'Confirm a phone number the delivery partner can reach them on.',
    ];
    const hi = [
      'Call type: {{storeName}} ke order ka delivery address verify karna.',
      '{{customerName}} ne {{productName}} (order {{orderId}}) is address pe order kiya hai: {{address}}, pincode {{pincode}}.',
      'Address padh ke confirm kijiye, house number, landmark aur pincode samet; koi correction ho toh exactly note kijiye.',
      window,
      'Delivery partner unhe kis number pe call kare, woh bhi confirm kijiye.',
    ];
    return [...(register === 'english' ? en : hi), contactLine(c?.supportContacts, register)];
  },
  order_confirmation: (config, register) => {
    const en = [
      'Call type: confirm a new order placed on {{storeName}}.',
      '{{customerName}} ordered {{productName}} (order {{orderId}}, {{orderAmount}}, payment {{paymentMode}}).',
      'Confirm they placed it and still want it; confirm quantity, size or variant and the delivery city.',
      'If they did not place it or want to cancel, say the order will not be shipped and note the reason.',
    ];
    const hi = [
      'Call type: {{storeName}} pe place hua naya order confirm karna.',
      '{{customerName}} ne {{productName}} order kiya hai (order {{orderId}}, {{orderAmount}}, payment {{paymentMode}}).',
      'Confirm kijiye ki order unhone hi kiya hai aur abhi bhi chahiye; quantity, size ya variant aur delivery city confirm kijiye.',
      'Agar order unhone nahi kiya ya cancel karna hai, toh bataiye ki order ship nahi hoga aur reason note kijiye.',
    ];
    return [
      ...(register === 'english' ? en : hi),
      contactLine(config.order_confirmation?.supportContacts, register),
    ];
  },
  ndr_followup: (config, register) => {
    const c = config.ndr_followup;
    const days = c?.maxRescheduleDays;
    const en = [
      'Call type: failed delivery (NDR) follow-up for {{storeName}}.',
      'The courier could not deliver order {{orderId}} ({{productName}}) to {{customerName}}; the courier noted: {{ndrReason}}.',
      'Find out what happened and whether they still want the order.',
      days !== undefined
        ? `Offer a new delivery date within the next ${days} days; never promise a date later than that.`
        : 'Offer to reattempt delivery on a date that suits them.',
      'Confirm the address and a reachable phone number for the reattempt.',
    ];
    const hi = [
      'Call type: {{storeName}} ke failed delivery (NDR) ka follow-up.',
      'Courier order {{orderId}} ({{productName}}) {{customerName}} ko deliver nahi kar paya; courier ka note: {{ndrReason}}.',
      'Poochiye kya hua tha aur kya unhe order abhi bhi chahiye.',
      days !== undefined
        ? `Agle ${days} din ke andar nayi delivery date offer kijiye; usse baad ki date promise mat kijiye.`
        : 'Unki suvidha ki date pe delivery dobara karne ka offer kijiye.',
      'Reattempt ke liye address aur reachable phone number confirm kijiye.',
    ];
    return [...(register === 'english' ? en : hi), contactLine(c?.supportContacts, register)];
  },
};

const STYLE: Record<Register, string> = {
  english: 'Speak in clear, friendly Indian English. Keep each reply to one or two short sentences.',
  hinglish:
    'Speak in Hinglish: everyday Hindi in Roman script mixed with common English words (order, delivery, payment, link), the way customers talk. Keep each reply to one or two short sentences; switch to English if the customer does.',
  hindi: 'Speak in simple, polite Hindi. Keep each reply to one or two short sentences.',
};

/** The compiled system prompt of an assistant: identity, the variant's brief, the client's own prompt, FAQs. */
export function compilePrompt(doc: AssistantDocument, knowledge: string): string {
  const { register } = languageOf(doc.icpContext.language);
  const identity = doc.agent.identity;
  const audience = [
    ...doc.icpContext.targetAudience,
    ...doc.icpContext.targetAgeGroups,
    ...doc.icpContext.locationTiers,
  ];
  const lines = [
    `You are ${identity.name || 'the assistant'}, a ${identity.gender} voice agent calling on behalf of the shop.`,
    STYLE[register],
    ...BRIEFS[doc.variant.type](doc.variant.config, register),
    ...(audience.length > 0 ? [`The customers are mostly: ${audience.join(', ')}.`] : []),
    ...(doc.agent.systemPrompt ? ['', doc.agent.systemPrompt] : []),
    ...(knowledge ? ['', knowledge] : []),
  ];
  return lines.filter((line, i, all) => line !== '' || (i > 0 && all[i - 1] !== '')).join('\n');
}

/** The opening line when the client gave none, in the variant's words. */
export function defaultFirstMessage(doc: AssistantDocument): string {
  const { register } = languageOf(doc.icpContext.language);
  const name = doc.agent.identity.name || 'Riya';
  return register === 'english'
    ? `Hello {{customerName}}, this is ${name} calling from {{storeName}}. Is this a good time to talk about your order?`
    : `Namaste {{customerName}}, main ${name} bol ${doc.agent.identity.gender === 'male' ? 'raha' : 'rahi'} hoon {{storeName}} se. Kya aapke order ke baare mein do minute baat kar sakte hain?`;
}
