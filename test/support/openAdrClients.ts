// What OpenADR clients do, for the interoperability tests: the two surfaces with their request
// shapes (3.0.1 targets are {type, values}, 3.1.0 targets are strings), VEN registration the way
// 3.1 VENs do it, and a real MQTT subscriber (the `mqtt` package) logging in with a VTN token.
import mqtt, { type MqttClient } from 'mqtt';
import type { Api } from './testApp.ts';
import { expectStatus, VTN, type VtnClient } from './vtn.ts';

export const V31 = '/api/openadr/3.1.0';

export interface Surface {
  name: '3.0.1' | '3.1.0';
  base: string;
  /** Targets as this surface writes them: `GROUP:north` on 3.1, {type: GROUP, values: [north]} on 3.0.1. */
  targets(...typed: string[]): unknown[];
  /** The query string selecting objects having any of these targets. */
  targetQuery(typed: string): string;
}

function split(typed: string): [string, string] {
  const i = typed.indexOf(':');
  return [typed.slice(0, i), typed.slice(i + 1)];
}

export const SURFACES: readonly Surface[] = [
  {
    name: '3.0.1',
    base: VTN,
    targets: (...typed) => typed.map((t) => ({ type: split(t)[0], values: [split(t)[1]] })),
    targetQuery: (typed) => `targetType=${encodeURIComponent(split(typed)[0])}&targetValues=${encodeURIComponent(split(typed)[1])}`,
  },
  {
    name: '3.1.0',
    base: V31,
    targets: (...typed) => typed,
    targetQuery: (typed) => `targets=${encodeURIComponent(typed)}`,
  },
];

/** A VEN created by business logic, bound to `client`, with `targets` (typed `TYPE:value`). */
export async function blVen(api: Api, s: Surface, bl: VtnClient, client: VtnClient, venName: string, targets: string[] = []): Promise<any> {
  const body = s.name === '3.1.0' ? { objectType: 'BL_VEN_REQUEST', venName, clientID: client.clientId, targets } : { venName, clientID: client.clientId, targets: s.targets(...targets) };
  return expectStatus(api.post(`${s.base}/vens`, body, bl.token), 201);
}

/** A resource of a VEN, created by business logic, with `targets`. */
export async function blResource(api: Api, s: Surface, bl: VtnClient, venID: string, resourceName: string, targets: string[]): Promise<any> {
  if (s.name === '3.1.0') return expectStatus(api.post(`${V31}/resources`, { objectType: 'BL_RESOURCE_REQUEST', resourceName, venID, clientID: 'ignored', targets }, bl.token), 201);
  return expectStatus(api.post(`${VTN}/vens/${venID}/resources`, { resourceName, targets: s.targets(...targets) }, bl.token), 201);
}

export interface Subscriber {
  client: MqttClient;
  messages: { topic: string; body: any }[];
  close(): Promise<void>;
}

/** A real MQTT client logged in with a VTN access token as password. The user name is the client
 * id, as /notifiers announces, unless `username` says otherwise. (The `mqtt` package sends no
 * password without a user name; test/support/mqtt.ts `connectPacket` does, as paho clients do.) */
export async function mqttSubscriber(port: number, vtn: VtnClient, filters: string[], options: { username?: string } = {}): Promise<Subscriber> {
  const username = options.username ?? vtn.clientId;
  const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, { username, password: vtn.token, reconnectPeriod: 0, connectTimeout: 5000 });
  const messages: { topic: string; body: any }[] = [];
  client.on('message', (topic, payload) => messages.push({ topic, body: JSON.parse(payload.toString()) }));
  const granted = await client.subscribeAsync(filters, { qos: 1 });
  if (granted.some((g) => g.qos > 1)) throw new Error(`subscription refused: ${JSON.stringify(granted)}`);
  return { client, messages, close: () => client.endAsync(true) };
}
