import { createWebMedia } from '../web/media.ts';
import { createExotelMedia } from './exotel/media.ts';
import { createPlivoMedia } from './plivo/media.ts';
import { createTwilioMedia } from './twilio/media.ts';
import type { CarrierMediaFactory, CarrierName } from './types.ts';
import { createVonageMedia } from './vonage/media.ts';

export type * from './types.ts';

/** The media adapter of each route. */
export const MEDIA_ADAPTERS: Readonly<Record<CarrierName, CarrierMediaFactory>> = {
  twilio: createTwilioMedia,
  exotel: createExotelMedia,
  plivo: createPlivoMedia,
  vonage: createVonageMedia,
  web: createWebMedia,
};
