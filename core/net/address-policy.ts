import { lookup } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Outbound URLs that customers supply (webhooks, tools) must not reach the platform's own network: loopback,
 * private ranges, link-local (cloud metadata), carrier-grade NAT, multicast and unspecified addresses are refused
 * unless the operator allows private targets. The check runs on every resolved address, and again at connect time
 * (see `guardedLookup`), so a DNS answer that changes between check and connect cannot slip through.
 */
const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped?.[1]) return blocked.check(mapped[1], 'ipv4');
    return blocked.check(address, 'ipv6');
  }
  return true;
}

export class AddressPolicyError extends Error {
  override name = 'AddressPolicyError';
}

export interface AddressPolicy {
  allowPrivate: boolean;
}

/** Resolves `hostname` and refuses it when any address is internal (unless allowed). */
export async function assertPublicHost(hostname: string, policy: AddressPolicy): Promise<void> {
  if (policy.allowPrivate) return;
  const host = hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [{ address: host }] : await lookup(host, { all: true, verbatim: true });
  if (addresses.length === 0) throw new AddressPolicyError(`${hostname} does not resolve`);
  for (const { address } of addresses) {
    if (isPrivateAddress(address)) {
      throw new AddressPolicyError(`${hostname} resolves to an internal address, which is not allowed`);
    }
  }
}

type LookupAddress = { address: string; family: number };
type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for sockets that refuses internal addresses at connect time. Node asks for every address
 * (`all: true`) when it races IPv4 and IPv6 (autoSelectFamily, on by default in Node 20), and for one otherwise.
 */
export function guardedLookup(policy: AddressPolicy): LookupFunction {
  const guarded = (
    hostname: string,
    options: { family?: number; all?: boolean } | number,
    callback: LookupCallback,
  ): void => {
    const family = typeof options === 'number' ? options : (options.family ?? 0);
    const all = typeof options === 'object' && options.all === true;
    lookup(hostname, { family, all: true }).then(
      (addresses) => {
        const allowed = policy.allowPrivate
          ? addresses
          : addresses.filter((a) => !isPrivateAddress(a.address));
        if (allowed.length === 0) {
          const error: NodeJS.ErrnoException = new AddressPolicyError(
            `${hostname} resolves to an internal address`,
          );
          error.code = 'EADDRNOTALLOWED';
          callback(error, all ? [] : '', 0);
          return;
        }
        if (all) callback(null, allowed);
        else callback(null, (allowed[0] as LookupAddress).address, (allowed[0] as LookupAddress).family);
      },
      (error: NodeJS.ErrnoException) => callback(error, all ? [] : '', 0),
    );
  };
  return guarded as LookupFunction;
}

/**
 * A host that is internal by its name alone: `localhost` names and literal internal addresses. Other names are
 * judged when they resolve, at connect time.
 */
export function isInternalHostName(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return isIP(host) !== 0 && isPrivateAddress(host);
}
