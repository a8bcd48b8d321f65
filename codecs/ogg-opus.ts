import { createRequire } from 'node:module';
import { pcm16FromBytes } from './pcm16.ts';
import type { WavAudio } from './wav.ts';

const require = createRequire(import.meta.url);
const { OpusEncoder } = require('@discordjs/opus') as typeof import('@discordjs/opus');

/** Opus always decodes at 48 kHz in Ogg Opus files (RFC 7845); the header's input rate is informational. */
const OGG_OPUS_RATE = 48_000;

/**
 * An Ogg Opus file (RFC 7845: `OpusHead`, `OpusTags`, then audio packets in Ogg pages, RFC 3533) decoded to
 * PCM16 at 48 kHz, one array per channel (channel mapping family 0: mono or stereo). The first logical stream is
 * read; the header's pre-skip is dropped. libopus (through @discordjs/opus) decodes the packets; the container is
 * read here. Throws an Error that says what is wrong.
 */
export function readOggOpus(bytes: Uint8Array): WavAudio {
  const packets = oggPackets(bytes);
  const head = packets[0];
  if (!head || Buffer.from(head.subarray(0, 8)).toString('latin1') !== 'OpusHead')
    throw new Error('an Ogg file that is not Opus (Vorbis and others are not taken)');
  if (head.length < 19) throw new Error('a short OpusHead');
  const channels = head[9]!;
  const preSkip = head[10]! | (head[11]! << 8);
  const family = head[18]!;
  if (family !== 0 || (channels !== 1 && channels !== 2))
    throw new Error(`Opus with ${channels} channels (mapping family ${family}); one or two are taken`);
  const decoder = new OpusEncoder(OGG_OPUS_RATE, channels);
  const pieces: Int16Array[] = [];
  let total = 0;
  for (const packet of packets.slice(2)) {
    if (packet.length === 0) continue;
    let pcm: Int16Array;
    try {
      pcm = pcm16FromBytes(decoder.decode(Buffer.from(packet)));
    } catch (error) {
      throw new Error(`an Opus packet could not be decoded: ${(error as Error).message}`);
    }
    pieces.push(pcm);
    total += pcm.length;
  }
  const frames = Math.max(0, total / channels - preSkip);
  const out = Array.from({ length: channels }, () => new Int16Array(frames));
  let frame = -preSkip;
  for (const pcm of pieces) {
    for (let n = 0; n < pcm.length; n += channels, frame++) {
      if (frame < 0 || frame >= frames) continue;
      for (let c = 0; c < channels; c++) out[c]![frame] = pcm[n + c]!;
    }
  }
  return { sampleRate: OGG_OPUS_RATE, channels: out };
}

/** The packets of an Ogg file's first logical stream, in order (packets spanning pages joined). */
function oggPackets(bytes: Uint8Array): Uint8Array[] {
  const packets: Uint8Array[] = [];
  let partial: Uint8Array[] = [];
  let serial: number | undefined;
  let at = 0;
  while (at < bytes.length) {
    if (at + 27 > bytes.length || Buffer.from(bytes.subarray(at, at + 4)).toString('latin1') !== 'OggS')
      throw new Error(`not an Ogg page at byte ${at}`);
    const view = new DataView(bytes.buffer, bytes.byteOffset + at, 27);
    const pageSerial = view.getUint32(14, true);
    const segments = bytes[at + 26]!;
    const table = bytes.subarray(at + 27, at + 27 + segments);
    if (table.length < segments) throw new Error('a truncated Ogg page');
    let body = at + 27 + segments;
    serial ??= pageSerial;
    const ours = pageSerial === serial;
    for (const lace of table) {
      if (body + lace > bytes.length) throw new Error('a truncated Ogg page');
      if (ours) partial.push(bytes.subarray(body, body + lace));
      body += lace;
      if (ours && lace < 255) {
        packets.push(Buffer.concat(partial));
        partial = [];
      }
    }
    at = body;
  }
  return packets;
}

/**
 * Opus packets of 20 ms (from `OpusCodec` at 48 kHz) in an Ogg Opus file, as a browser's recorder writes one:
 * for tests and tools. The CRC of each page is computed as RFC 3533 says.
 */
export function writeOggOpus(packets: Uint8Array[], channels: 1 | 2, preSkip = 312): Buffer {
  const serial = 0x5eec;
  const head = Buffer.alloc(19);
  head.write('OpusHead', 0, 'latin1');
  head[8] = 1;
  head[9] = channels;
  head.writeUInt16LE(preSkip, 10);
  head.writeUInt32LE(48_000, 12);
  const tags = Buffer.alloc(16);
  tags.write('OpusTags', 0, 'latin1');
  const pages: Buffer[] = [page(serial, 0, 0x02, 0n, [head]), page(serial, 1, 0, 0n, [tags])];
  let granule = 0n;
  for (let i = 0; i < packets.length; i += 50) {
    const group = packets.slice(i, i + 50);
    granule += BigInt(group.length * 960);
    const last = i + 50 >= packets.length;
    pages.push(page(serial, pages.length, last ? 0x04 : 0, granule, group));
  }
  return Buffer.concat(pages);
}

function page(
  serial: number,
  sequence: number,
  flags: number,
  granule: bigint,
  packets: Uint8Array[],
): Buffer {
  const lacing: number[] = [];
  for (const packet of packets) {
    let left = packet.length;
    while (left >= 255) {
      lacing.push(255);
      left -= 255;
    }
    lacing.push(left);
  }
  const header = Buffer.alloc(27 + lacing.length);
  header.write('OggS', 0, 'latin1');
  header[5] = flags;
  header.writeBigUInt64LE(granule, 6);
  header.writeUInt32LE(serial, 14);
  header.writeUInt32LE(sequence, 18);
  header[26] = lacing.length;
  Buffer.from(lacing).copy(header, 27);
  const out = Buffer.concat([header, ...packets]);
  out.writeUInt32LE(oggCrc(out), 22);
  return out;
}

let crcTable: Uint32Array | undefined;

function oggCrc(bytes: Uint8Array): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let i = 0; i < 256; i++) {
      let r = i << 24;
      for (let k = 0; k < 8; k++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
      crcTable[i] = r >>> 0;
    }
  }
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) ^ crcTable[((crc >>> 24) ^ byte) & 0xff]!) >>> 0;
  return crc;
}
