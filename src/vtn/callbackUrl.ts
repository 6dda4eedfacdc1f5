// Callback URLs are chosen by clients and called by the server, which makes them a way to make
// the server reach into its own network (SSRF). They must be http or https, carry no
// credentials (the bearerToken is for that), and, unless VTN_WEBHOOK_ALLOW_PRIVATE is set, must
// not name a loopback, private, link-local or other special-purpose address (specialAddresses.ts,
// docs/webhook-addresses.md). The address check is
// made twice: on the URL when the subscription is written (IP literals, localhost), and on every
// address the host name resolves to when a notification is sent (webhookClient.ts), so a name
// re-pointed at an internal address later is refused too.
import { specialPurposeRange } from './specialAddresses.ts';

export const SPECIAL_ADDRESS = 'must not point at a loopback, private, link-local or other special-purpose address';

/** Whether an IP address is in a special-purpose range (specialAddresses.ts): loopback,
 * private, link-local, multicast, reserved, documentation, NAT64/6to4/IPv4-mapped forms of
 * those, … False for public addresses and for text that is not an IP address. */
export function isInternalAddress(address: string): boolean {
  return specialPurposeRange(address) !== undefined;
}

export function isLocalName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/** Why a callback URL is refused, or undefined when it is acceptable. */
export function callbackUrlProblem(raw: string, allowInternal: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must use http or https';
  if (url.username || url.password) return 'must not contain credentials (use bearerToken)';
  if (allowInternal) return undefined;
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (isLocalName(host)) return `${SPECIAL_ADDRESS} (localhost)`;
  const range = specialPurposeRange(host);
  return range ? `${SPECIAL_ADDRESS} (${range})` : undefined;
}
