// Helpers for the VTN tests: VTN credentials with tokens, real HTTP receivers for webhooks,
// and polling with a deadline (no sleeps for timing).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOrganization, fetchToken } from './fixtures.ts';
import { startTestApp, type Api, type TestApp } from './testApp.ts';

export const VTN = '/api/openadr/v1';
export const ALL_SCOPES = ['read_all', 'write_programs', 'write_events', 'write_reports', 'write_subscriptions', 'write_vens', 'read_targets', 'read_ven_objects'];
export const BL_SCOPES = ['read_all', 'write_programs', 'write_events', 'write_subscriptions', 'write_vens'];
export const VEN_SCOPES = ['read_all', 'write_reports', 'write_subscriptions', 'write_vens'];

export interface VtnClient {
  organizationId: number;
  clientId: string;
  token: string;
}

/** A VTN credential with the given scopes (in a new OpenADR organization unless one is given). */
export async function vtnClient(api: Api, admin: string, scopes: string[], organizationId?: number): Promise<VtnClient> {
  const org = organizationId ?? (await createOrganization(api, admin, ['OpenADR']));
  const res = await api.post('/api/openadr/vtn/credential', { organizationId: org, name: `vtn-${scopes.join('-')}`.slice(0, 100), scopes }, admin);
  if (res.status !== 200) throw new Error(`create VTN credential: ${res.status} ${res.text}`);
  return { organizationId: org, clientId: res.body.clientId, token: await fetchToken(api, res.body.clientId, res.body.clientSecret) };
}

/** The app (started with `env`), a business-logic credential (BL_SCOPES) in a new OpenADR
 * organization, and a VEN credential with `venScopes` in the same organization. */
export async function startVtnApp(env: Record<string, string>, venScopes: string[] = VEN_SCOPES): Promise<{ t: TestApp; bl: VtnClient; ven: VtnClient }> {
  const t = await startTestApp(env);
  const bl = await vtnClient(t.api, t.adminToken, BL_SCOPES);
  const ven = await vtnClient(t.api, t.adminToken, venScopes, bl.organizationId);
  return { t, bl, ven };
}

/** Calls the API and fails with the response text on an unexpected status. */
export async function expectStatus(promise: Promise<{ status: number; text: string; body: any }>, status: number): Promise<any> {
  const res = await promise;
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${res.text}`);
  return res.body;
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
  status: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Status to answer the n-th request (0-based) with; default 200; 0 = never answer. */
  respond: (n: number, req: Received) => number;
  close(): Promise<void>;
}

/** A real HTTP server standing in for a VEN's or a business system's webhook endpoint. */
export async function startReceiver(respond: (n: number, req: Received) => number = () => 200): Promise<Receiver> {
  const receiver: Receiver = { url: '', received: [], respond, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString();
      const entry: Received = { path: req.url ?? '', headers: req.headers, body: text ? JSON.parse(text) : undefined, status: 0 };
      entry.status = receiver.respond(receiver.received.length, entry);
      receiver.received.push(entry);
      if (entry.status === 0) return; // hang: the caller's timeout must act
      res.writeHead(entry.status, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}
