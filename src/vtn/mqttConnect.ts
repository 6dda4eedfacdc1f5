// What the embedded broker decides about a CONNECT before aedes answers it (aedes' preConnect
// step; its authenticate step sends the CONNACK with the code decided here):
// - refused without looking at the token while the (user name, address) pair or the address is
//   over its failed-login quota (mqttLimits.ts): return code 3;
// - the password must be a VTN access token of an organization with OpenADR; the user name may be
//   anything, or absent (the token says who the client is): return code 4 or 5 otherwise, and the
//   failure is counted;
// - the client id is taken into the namespace of the token's credential,
//   `<credential client id>/<client id>`, so that no credential reaches, kicks or wipes another's
//   session (an empty one, allowed with clean session on, becomes a random one there): return
//   code 2 for an empty id with clean session off (MQTT 3.1.1, 3.1.3-8) or one over 256
//   characters;
// - a will is dropped: clients do not publish, so it could never be sent.
import { randomUUID } from 'node:crypto';
import type { AuthenticateError, ConnectPacket } from 'aedes';
import { decodeJwt } from 'jose';
import type { Principal } from '../http/types.ts';
import { vtnCaller } from './access.ts';
import type { FailedAttempts } from '../http/failedAttempts.ts';
import { RateLimitedError } from '../http/rateLimit.ts';

export type Authenticate = (authorization: string) => Promise<Principal>;

/** CONNACK return codes (MQTT 3.1.1, 3.2.2.3). */
export const IDENTIFIER_REJECTED = 2;
/** MQTT 3.1.1 has no "rate exceeded" code (MQTT 5's 0x9F): "server unavailable" says come back later. */
export const SERVER_UNAVAILABLE = 3;
export const BAD_CREDENTIALS = 4;
export const NOT_AUTHORIZED = 5;
const MAX_CLIENT_ID = 256;

/** What the CONNECT check decided. */
export type Login = { refused: AuthenticateError } | { token: string; principal: Principal; ven: boolean };

export function refusal(message: string, returnCode: number): { refused: AuthenticateError } {
  return { refused: Object.assign(new Error(message), { returnCode }) as AuthenticateError };
}

/** Checks a CONNECT from `address`; rewrites its client id (and drops its will) when accepted. */
export async function checkConnect(packet: ConnectPacket, address: string, authenticate: Authenticate, failures: FailedAttempts): Promise<Login> {
  const { username } = packet;
  packet.will = undefined;
  const name = username ? username : undefined;
  try {
    await failures.check(address, name);
  } catch (err) {
    if (err instanceof RateLimitedError) return refusal('Too many failed logins; retry later', SERVER_UNAVAILABLE);
    throw err;
  }
  const token = packet.password?.toString('utf8') ?? '';
  const login: Login =
    token === ''
      ? refusal('The password must be a VTN access token', BAD_CREDENTIALS)
      : await authenticate(`Bearer ${token}`).then(
          (principal): Login => {
            if (!principal.features.has('OpenADR')) return refusal('OpenADR is not enabled for this organization', NOT_AUTHORIZED);
            try {
              return { token, principal, ven: vtnCaller(principal).ven };
            } catch (err) {
              return refusal((err as Error).message, NOT_AUTHORIZED);
            }
          },
          (err: Error) => refusal(err.message, BAD_CREDENTIALS),
        );
  if ('refused' in login) {
    await failures.failed(address, name);
    return login;
  }
  const given = packet.clientId ?? '';
  if (given === '' && packet.clean === false) return refusal('A persistent session (clean session off) needs a client id', IDENTIFIER_REJECTED);
  if (given.length > MAX_CLIENT_ID) return refusal(`A client id has at most ${MAX_CLIENT_ID} characters`, IDENTIFIER_REJECTED);
  // Credential ids (`vtn_<hex>`, `oc_<hex>`, `user:<n>`) never contain '/': the prefix is unambiguous.
  packet.clientId = `${login.principal.subject}/${given === '' ? randomUUID() : given}`;
  return login;
}

/** The token_version a JWT was issued with (its signature was verified by `authenticate`); null
 * for a personal access token. */
export function tokenVersionOf(token: string, principal: Principal): number | null {
  if (principal.clientRowId === null) return null;
  const { ver } = decodeJwt(token);
  return typeof ver === 'number' ? ver : null;
}
