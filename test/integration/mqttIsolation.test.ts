// MQTT isolation, as a property: two organizations, each with a business-logic client and VEN
// clients owning VENs; random sequences of CONNECTs (any client id from a small shared pool, so
// that credentials collide on ids; clean session on or off), SUBSCRIBEs (own VENs' topics, other
// VENs', other organizations' prefixes, wildcards, `$SYS`), disconnections, and VTN changes
// through the API (events targeted at groups or untargeted, VENs moved between credentials,
// webhook subscriptions carrying a bearer token). Every message any client receives must be one
// its credential may read at some moment between the change it reports (or the CONNECT that
// resumed the session, for what waited) and its arrival, and never another organization's.
//
// On failure fast-check prints the seed and path; replay with MQTT_PROPERTY_SEED=<seed>.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectSession, granted, type Session } from '../support/mqtt.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';
import { BL_SCOPES, expectStatus, VEN_SCOPES, vtnClient, waitFor, type VtnClient } from '../support/vtn.ts';

const V31 = '/api/openadr/3.1.0';
const SEED = process.env.MQTT_PROPERTY_SEED !== undefined ? Number(process.env.MQTT_PROPERTY_SEED) : Date.now() % 2 ** 31;
const RUNS = Number(process.env.MQTT_PROPERTY_RUNS ?? 4);
const CLIENT_IDS = ['gw-1', 'gw-2'];

interface Credential extends VtnClient {
  name: string;
  ven: boolean;
  org: 'A' | 'B';
}
interface Ven {
  id: string;
  name: string;
  org: 'A' | 'B';
  group: string;
}
/** Who owns each VEN after each action (index: actions completed). */
type Owners = Map<string, string>;
interface Receipt {
  topic: string;
  body: any;
  /** Actions completed when it arrived. */
  at: number;
}
interface Open {
  credential: Credential;
  clientId: string;
  session: Session;
  /** Actions completed when its CONNECT was sent. */
  connectedAt: number;
  receipts: Receipt[];
}

type Command =
  | { kind: 'connect'; who: number; clientId: number; clean: boolean; filters: number[] }
  | { kind: 'subscribe'; session: number; filters: number[] }
  | { kind: 'disconnect'; session: number }
  | { kind: 'reconnect'; session: number }
  | { kind: 'event'; org: 'A' | 'B'; target: number }
  | { kind: 'move'; ven: number; to: number }
  | { kind: 'subscription'; org: 'A' | 'B' };

const filterPicks = fc.array(fc.nat(40), { minLength: 1, maxLength: 4 });
const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('connect' as const), who: fc.nat(5), clientId: fc.nat(CLIENT_IDS.length - 1), clean: fc.boolean(), filters: filterPicks }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('subscribe' as const), session: fc.nat(20), filters: filterPicks }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('disconnect' as const), session: fc.nat(20) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('reconnect' as const), session: fc.nat(20) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('event' as const), org: fc.constantFrom('A' as const, 'B' as const), target: fc.nat(3) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('move' as const), ven: fc.nat(4), to: fc.nat(5) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('subscription' as const), org: fc.constantFrom('A' as const, 'B' as const) }) },
);

describe('MQTT isolation between credentials and organizations', () => {
  let t: TestApp;
  const creds: Credential[] = [];
  const vens: Ven[] = [];
  const orgIds = new Map<'A' | 'B', number>();
  const programs = new Map<'A' | 'B', string>();
  const bls = new Map<'A' | 'B', Credential>();
  /** Each event's groups (empty: untargeted) and the action that created it, by id. */
  const events = new Map<string, { groups: string[]; at: number }>();
  /** Each VEN's moves: after which action it belonged to whom. */
  const moves = new Map<string, { at: number; owner: string }[]>();
  const secrets: { org: 'A' | 'B'; token: string }[] = [];
  const states: Owners[] = [];
  const all: Open[] = [];

  const org = (c: Credential) => orgIds.get(c.org)!;
  const owners = () => states[states.length - 1]!;
  const done = () => states.length - 1;

  beforeAll(async () => {
    t = await startTestApp({ VTN_DISPATCH_POLL_MS: '20', VTN_WEBHOOK_ALLOW_PRIVATE: 'true', MQTT_MAX_QUEUED_PER_SESSION: '50' });
    for (const o of ['A', 'B'] as const) {
      const bl = { ...(await vtnClient(t.api, t.adminToken, BL_SCOPES)), name: `bl${o}`, ven: false, org: o };
      orgIds.set(o, bl.organizationId);
      bls.set(o, bl);
      creds.push(bl);
      for (let i = 1; i <= 2; i++) creds.push({ ...(await vtnClient(t.api, t.adminToken, VEN_SCOPES, bl.organizationId)), name: `ven${o}${i}`, ven: true, org: o });
      programs.set(o, (await expectStatus(t.api.post(`${V31}/programs`, { programName: `isolation-${o}` }, bl.token), 201)).id);
    }
    const initial: Owners = new Map();
    // Five VENs: three in A (two groups), two in B; each starts with a VEN client of its organization.
    const layout: [org: 'A' | 'B', group: string, owner: string][] = [['A', 'gA1', 'venA1'], ['A', 'gA2', 'venA1'], ['A', 'gA1', 'venA2'], ['B', 'gB1', 'venB1'], ['B', 'gB1', 'venB2']];
    for (const [i, [o, group, owner]] of layout.entries()) {
      const name = `ven-${o}-${i}`;
      const clientID = creds.find((c) => c.name === owner)!.clientId;
      const id = (await expectStatus(t.api.post(`${V31}/vens`, { objectType: 'BL_VEN_REQUEST', venName: name, clientID, targets: [`GROUP:${group}`] }, bls.get(o)!.token), 201)).id;
      vens.push({ id, name, org: o, group });
      initial.set(id, clientID);
    }
    states.push(initial);
  });
  afterAll(async () => {
    for (const o of all) await o.session.client.endAsync(true).catch(() => undefined);
    await t?.close();
  });

  /** The topic filters a session may try. */
  function filters(c: Credential): string[] {
    const own = orgIds.get(c.org)!;
    const other = orgIds.get(c.org === 'A' ? 'B' : 'A')!;
    // A VEN client's own VENs' topics first (and again among all VENs').
    const mine = vens.filter((v) => states[states.length - 1]!.get(v.id) === c.clientId);
    const venTopics = [...mine, ...vens].flatMap((v) => [`openadr3/${orgIds.get(v.org)}/vens/${v.id}/#`, `openadr3/${orgIds.get(v.org)}/vens/${v.id}/events/+`]);
    return [
      ...venTopics,
      '#',
      '+/#',
      '$SYS/#',
      `openadr3/${own}/#`,
      `openadr3/${other}/#`,
      `openadr3/+/vens/+/events/+`,
      `openadr3/${own}/vens/+/events/+`,
      `openadr3/${own}/events/+`,
      `openadr3/${own}/subscriptions/+`,
      `openadr3/${other}/subscriptions/create`,
      `openadr3/${own}/vens/+/#`,
    ];
  }

  /** Whether `c` may read the message under the owners of state `j`. */
  function readable(j: number, c: Credential, r: Receipt): boolean {
    const prefix = `openadr3/${org(c)}/`;
    if (!r.topic.startsWith(prefix)) return false;
    if (!c.ven) return true;
    const m = /^vens\/([^/]+)\//.exec(r.topic.slice(prefix.length));
    if (!m) return false;
    const state = states[Math.min(j, states.length - 1)]!;
    const bound = state.get(m[1]!) === c.clientId;
    switch (r.body.objectType) {
      case 'EVENT': {
        const groups = events.get(r.body.object.id)?.groups;
        if (groups === undefined) return false;
        // What reaches that VEN: its group (the VENs here have no other target).
        const ven = vens.find((v) => v.id === m[1]);
        return bound && ven !== undefined && (groups.length === 0 || groups.includes(`GROUP:${ven.group}`));
      }
      case 'PROGRAM':
        return bound;
      case 'VEN':
        return r.body.object.clientID === c.clientId && (bound || r.body.operation === 'DELETE');
      default:
        return false;
    }
  }

  async function run(commands: Command[]): Promise<void> {
    const open: Open[] = [];
    try {
      for (const cmd of commands) {
        switch (cmd.kind) {
          case 'connect':
          case 'reconnect': {
            let credential: Credential;
            let clientId: string;
            let clean: boolean;
            if (cmd.kind === 'connect') [credential, clientId, clean] = [creds[cmd.who]!, CLIENT_IDS[cmd.clientId]!, cmd.clean];
            else {
              // Resume a session that ended, as its client would (same credential and id).
              const ended = open.filter((o) => o.session.closed);
              if (ended.length === 0) break;
              const o = ended[cmd.session % ended.length]!;
              [credential, clientId, clean] = [o.credential, o.clientId, false];
            }
            const connectedAt = done();
            const receipts: Receipt[] = [];
            const session = await connectSession(t.app.mqttPort, {
              username: credential.clientId,
              password: credential.token,
              clientId,
              clean,
              onMessage: (topic, body) => receipts.push({ topic, body, at: done() }),
            });
            const entry: Open = { credential, clientId, session, connectedAt, receipts };
            open.push(entry);
            all.push(entry);
            if (cmd.kind === 'connect') {
              const list = filters(credential);
              await granted(session.client, cmd.filters.map((f) => list[f % list.length]!)).catch(() => undefined);
            }
            break;
          }
          case 'subscribe': {
            const live = open.filter((o) => !o.session.closed);
            if (live.length === 0) break;
            const o = live[cmd.session % live.length]!;
            const list = filters(o.credential);
            await granted(o.session.client, cmd.filters.map((f) => list[f % list.length]!)).catch(() => undefined);
            break;
          }
          case 'disconnect': {
            const live = open.filter((o) => !o.session.closed);
            if (live.length === 0) break;
            await live[cmd.session % live.length]!.session.client.endAsync().catch(() => undefined);
            break;
          }
          case 'event': {
            const groups = [[], ['gA1'], ['gA2'], ['gB1']][cmd.target]!.map((g) => `GROUP:${g}`);
            const event = await expectStatus(t.api.post(`${V31}/events`, { programID: programs.get(cmd.org), eventName: 'isolation', ...(groups.length ? { targets: groups } : {}) }, bls.get(cmd.org)!.token), 201);
            states.push(owners());
            events.set(event.id, { groups, at: done() });
            break;
          }
          case 'move': {
            const ven = vens[cmd.ven % vens.length]!;
            const candidates = creds.filter((c) => c.ven && c.org === ven.org);
            const to = candidates[cmd.to % candidates.length]!;
            const next = new Map(owners());
            // The new owner counts from before the change is made: the old one until it is done.
            await expectStatus(
              t.api.put(`${V31}/vens/${ven.id}`, { objectType: 'BL_VEN_REQUEST', venName: ven.name, clientID: to.clientId, targets: [`GROUP:${ven.group}`] }, bls.get(ven.org)!.token),
              200,
            );
            next.set(ven.id, to.clientId);
            states.push(next);
            moves.set(ven.id, [...(moves.get(ven.id) ?? []), { at: done(), owner: to.clientId }]);
            break;
          }
          case 'subscription': {
            const secret = `secret-${cmd.org}-${secrets.length}`;
            secrets.push({ org: cmd.org, token: secret });
            const hook = [{ objects: ['EVENT'], operations: ['CREATE'], callbackUrl: 'http://127.0.0.1:9/hook', bearerToken: secret }];
            await expectStatus(t.api.post(`${V31}/subscriptions`, { clientName: 'isolation', programID: programs.get(cmd.org), objectOperations: hook }, bls.get(cmd.org)!.token), 201);
            states.push(owners());
            break;
          }
        }
      }
      // Let what was published arrive: an untargeted marker per organization, seen by a
      // business-logic observer of each.
      for (const o of ['A', 'B'] as const) {
        const bl = bls.get(o)!;
        const watch = await connectSession(t.app.mqttPort, { username: bl.clientId, password: bl.token });
        try {
          await granted(watch.client, [`openadr3/${orgIds.get(o)}/events/create`]);
          const marker = await expectStatus(t.api.post(`${V31}/events`, { programID: programs.get(o), eventName: 'marker' }, bl.token), 201);
          states.push(owners());
          events.set(marker.id, { groups: [], at: done() });
          await waitFor('the marker', () => watch.messages.some((m) => m.body.object?.id === marker.id), 5000);
        } finally {
          await watch.client.endAsync(true);
        }
      }
      for (const o of open) {
        for (const r of o.receipts) {
          const other = o.credential.org === 'A' ? 'B' : 'A';
          const leaked = secrets.find((s) => s.org === other && JSON.stringify(r.body).includes(s.token));
          if (leaked) throw new Error(`${o.credential.name} received organization ${other}'s webhook token on ${r.topic}`);
          const from = Math.max(actionOf(r), o.connectedAt);
          let ok = false;
          for (let j = from; j <= r.at + 1 && !ok; j++) ok = readable(j, o.credential, r);
          if (!ok) throw new Error(`${o.credential.name} (client id ${o.clientId}) received ${r.body.objectType} ${r.body.operation} ${r.body.object?.id} on ${r.topic}, readable at no moment between action ${from} and ${r.at + 1}`);
        }
      }
    } finally {
      for (const o of open) await o.session.client.endAsync(true).catch(() => undefined);
    }
  }

  /** The action after which the message's object was as it reports (its change). */
  function actionOf(r: Receipt): number {
    if (r.body.objectType === 'EVENT') return events.get(r.body.object?.id)?.at ?? 0;
    if (r.body.objectType === 'VEN') {
      const made = (moves.get(r.body.object?.id) ?? []).filter((m) => m.owner === r.body.object.clientID && m.at <= r.at + 1);
      return made.length > 0 ? made[made.length - 1]!.at : 0;
    }
    return 0;
  }

  it(`no client receives what its credential may not read, nor another organization's data (seed ${SEED})`, async () => {
    // Always tried first: a persistent VEN session subscribing to its own VEN's topics among
    // others', away while events of both organizations and a VEN move happen, then resumed.
    const example: Command[] = [
      { kind: 'connect', who: 1, clientId: 0, clean: false, filters: [0, 5, 13, 17, 21] },
      { kind: 'event', org: 'A', target: 0 },
      { kind: 'disconnect', session: 0 },
      { kind: 'event', org: 'B', target: 0 },
      { kind: 'event', org: 'A', target: 2 },
      { kind: 'subscription', org: 'B' },
      { kind: 'move', ven: 0, to: 2 },
      { kind: 'event', org: 'A', target: 1 },
      { kind: 'reconnect', session: 0 },
      { kind: 'event', org: 'A', target: 0 },
    ];
    await fc.assert(fc.asyncProperty(fc.array(command, { minLength: 20, maxLength: 50 }), run), { seed: SEED, numRuns: RUNS, endOnFailure: true, examples: [[example]] });
    expect(all.length).toBeGreaterThan(0);
    const received = all.reduce((n, o) => n + o.receipts.length, 0);
    const byVenClients = all.filter((o) => o.credential.ven).reduce((n, o) => n + o.receipts.length, 0);
    console.log(`MQTT isolation: one example and ${RUNS} random runs, seed ${SEED}: ${all.length} connections, ${received} messages received (${byVenClients} by VEN clients), ${states.length - 1} VTN changes`);
    expect(byVenClients).toBeGreaterThan(0);
  }, 60_000);
});
