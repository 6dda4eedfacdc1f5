// `npm run demo` (= `npm start -- --demo`): the platform on embedded defaults with sample data.
// On an empty DATA_DIR the demo world is seeded through the public API (seed.ts) and written to
// DATA_DIR/demo.json; on later starts the same world is shown again. A small webhook receiver
// stands in for the demo's VENs, so their subscriptions' notifications are delivered.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { DemoApi } from './api.ts';
import { seedDemo, type DemoWorld } from './seed.ts';

/** The demo's own folder, so that it never writes into the data of a plain `npm start`. */
export const DEMO_DATA_DIR = './.demo';

/** The environment of a demo start: DATA_DIR defaults to ./.demo, and webhooks may reach the
 * demo VEN on 127.0.0.1 (refused by default: docs/webhook-addresses.md). */
export function demoEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, DATA_DIR: env.DATA_DIR ?? DEMO_DATA_DIR, VTN_WEBHOOK_ALLOW_PRIVATE: env.VTN_WEBHOOK_ALLOW_PRIVATE ?? 'true' };
}

interface Stored {
  world: DemoWorld;
  venReceiverPort: number;
}

export interface DemoStart {
  baseUrl: string;
  dataDir: string;
  /** ADMIN_TOKEN when set; otherwise the token in DATA_DIR/admin-token is used. */
  adminToken: string | undefined;
  write: (text: string) => void;
}

/** Seeds (or finds) the demo world and prints how to look at it. Returns a stop function. */
export async function startDemo(start: DemoStart): Promise<{ world: DemoWorld | undefined; stop: () => Promise<void> }> {
  const file = path.resolve(start.dataDir, 'demo.json');
  const stored = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Stored) : undefined;
  const receiver = await startVenReceiver(stored?.venReceiverPort);
  const stop = () => new Promise<void>((resolve) => receiver.server.close(() => resolve()));
  const admin = start.adminToken ?? fs.readFileSync(path.resolve(start.dataDir, 'admin-token'), 'utf8').trim();
  const api = new DemoApi(start.baseUrl);

  if (stored) {
    if (stored.venReceiverPort !== receiver.port) await moveSubscriptions(api, stored.world, receiver.url);
    fs.writeFileSync(file, JSON.stringify({ ...stored, venReceiverPort: receiver.port }, null, 2), { mode: 0o600 });
    start.write(signIn(start.baseUrl, stored.world, file, `Demo data from ${stored.world.seededAt.slice(0, 10)} (DATA_DIR ${start.dataDir}).`));
    return { world: stored.world, stop };
  }
  const { headers } = await api.call('GET', '/api/admin/organizations?limit=1', { token: admin });
  if (Number(headers.get('x-total-count')) > 0) {
    start.write(`\n  DATA_DIR ${start.dataDir} already holds data and no demo: nothing seeded. For the demo world, start with an empty DATA_DIR.\n\n`);
    return { world: undefined, stop };
  }
  start.write('  Seeding the demo world through the API…\n');
  const world = await seedDemo({ baseUrl: start.baseUrl, adminToken: admin, venCallbackUrl: receiver.url, progress: (line) => start.write(`    ${line}\n`) });
  fs.writeFileSync(file, JSON.stringify({ world, venReceiverPort: receiver.port } satisfies Stored, null, 2), { mode: 0o600 });
  const summary =
    `Demo data seeded in ${world.seconds.toFixed(1)} s: ${Object.keys(world.organizations).length} organizations, ${Object.keys(world.registers).length} registers with ` +
    `${world.readings.toLocaleString('en-US')} readings, ${world.market.flexibilityTransactions + world.market.availabilityTransactions} transactions ` +
    `(${world.market.start.slice(0, 10)} to ${world.market.end.slice(0, 10)}), ${world.vtn.vens.length} VENs.`;
  start.write(signIn(start.baseUrl, world, file, summary));
  return { world, stop };
}

function signIn(baseUrl: string, world: DemoWorld, file: string, summary: string): string {
  const links = world.links;
  return [
    '',
    `  ${summary}`,
    `  Sign in at ${baseUrl}/console with the personal access token of "${world.analyst.name}":`,
    '',
    `    ${world.analyst.token}`,
    '',
    '  then open',
    `    Readings         ${baseUrl}${links.readings}`,
    `    Coverage         ${baseUrl}${links.coverage}`,
    `    Demand response  ${baseUrl}${links.demandResponse}`,
    `    Market           ${baseUrl}${links.market}`,
    `    Battery's loop   ${baseUrl}${links.loop}`,
    `  Every id, client id and secret of the demo: ${file}`,
    '',
    '',
  ].join('\n');
}

/** The demo VENs' webhook endpoint: answers every notification 204. */
async function startVenReceiver(port = 0): Promise<{ server: http.Server; port: number; url: string }> {
  const listen = (p: number) =>
    new Promise<http.Server>((resolve, reject) => {
      const server = http.createServer((req, res) => {
        req.resume();
        req.on('end', () => res.writeHead(204).end());
      });
      server.once('error', reject);
      server.listen(p, '127.0.0.1', () => resolve(server));
    });
  // The port the subscriptions were made with, when it is free; any other port otherwise.
  const server = await listen(port).catch(() => listen(0));
  const actual = (server.address() as AddressInfo).port;
  return { server, port: actual, url: `http://127.0.0.1:${actual}/ven` };
}

/** Points the demo VENs' subscriptions at the receiver's new address (as each VEN would). */
async function moveSubscriptions(api: DemoApi, world: DemoWorld, url: string): Promise<void> {
  const VTN = '/api/openadr/v1';
  for (const ven of world.vtn.vens) {
    const token = await api.token(ven.clientId, ven.clientSecret);
    const subscriptions = await api.get<{ id: string; clientName: string; programID: string; objectOperations: { objects: string[]; operations: string[]; callbackUrl: string }[] }[]>(`${VTN}/subscriptions`, token);
    for (const s of subscriptions) {
      const objectOperations = s.objectOperations.map((o) => ({ ...o, callbackUrl: `${url}/${ven.venName}` }));
      await api.call('PUT', `${VTN}/subscriptions/${s.id}`, { token, json: { clientName: s.clientName, programID: s.programID, objectOperations } });
    }
  }
}
