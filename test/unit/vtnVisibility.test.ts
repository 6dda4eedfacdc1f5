// The privacy rule's pure parts (src/vtn/visibility.ts), as the MQTT broker calls them at
// delivery: which messages a VEN client may receive on which topics, with its VENs' reach.
import { describe, expect, it } from 'vitest';
import type { VtnCaller } from '../../src/vtn/access.ts';
import { mayRead, mayReceive, targetedVisible, type Reach } from '../../src/vtn/visibility.ts';

const ven: VtnCaller = { organizationId: 7, clientId: 'ven-client', ven: true };
const bl: VtnCaller = { organizationId: 7, clientId: 'bl-client', ven: false };
const key = (type: string, value: string) => `${type}\u001f${value}`;
const reach: Reach = {
  vens: new Map([['v1', new Set([key('GROUP', 'north'), key('VEN_NAME', 'ven-1')])]]),
  keys: new Set([key('GROUP', 'north'), key('VEN_NAME', 'ven-1')]),
};
const event = (targets: string[] | null, operation = 'CREATE') => ({ objectType: 'EVENT', operation, object: { id: 'e', targets }, targets });

describe('mayReceive', () => {
  it('gives business-logic clients every topic of their organization and nothing of another', () => {
    expect(mayReceive(bl, undefined, 'openadr3/7/events/create', event(['GROUP:south']))).toBe(true);
    expect(mayReceive(bl, undefined, 'openadr3/8/events/create', event(null))).toBe(false);
    expect(mayReceive(bl, undefined, 'openadr3/77/events/create', event(null))).toBe(false);
  });

  it('gives a VEN client its VENs’ topics, and events there only while that VEN may read them', () => {
    expect(mayReceive(ven, reach, 'openadr3/7/vens/v1/events/create', event(['GROUP:north']))).toBe(true);
    expect(mayReceive(ven, reach, 'openadr3/7/vens/v1/events/create', event(['VEN_NAME:ven-1']))).toBe(true);
    expect(mayReceive(ven, reach, 'openadr3/7/vens/v1/events/create', event(null))).toBe(true);
    expect(mayReceive(ven, reach, 'openadr3/7/vens/v1/events/update', event(['GROUP:south']))).toBe(false);
    expect(mayReceive(ven, reach, 'openadr3/7/vens/v1/programs/update', { objectType: 'PROGRAM', operation: 'UPDATE', object: { targets: ['GROUP:south'] } })).toBe(false);
    expect(mayReceive(ven, reach, 'openadr3/7/vens/v2/events/create', event(null))).toBe(false);
    expect(mayReceive(ven, reach, 'openadr3/7/events/create', event(null))).toBe(false);
    expect(mayReceive(ven, reach, 'openadr3/8/vens/v1/events/create', event(null))).toBe(false);
    expect(mayReceive(ven, reach, 'openadr3/7/vens/v1/update', { objectType: 'VEN', operation: 'UPDATE', object: { clientID: 'ven-client' } })).toBe(true);
  });

  it('delivers the deletion of a VEN client’s own VEN or resource, and no one else’s', () => {
    const gone = (clientID: string) => ({ objectType: 'VEN', operation: 'DELETE', object: { id: 'v9', clientID } });
    expect(mayReceive(ven, reach, 'openadr3/7/vens/v9/delete', gone('ven-client'))).toBe(true);
    expect(mayReceive(ven, reach, 'openadr3/7/vens/v9/delete', gone('someone-else'))).toBe(false);
    expect(mayReceive(ven, reach, 'openadr3/7/vens/v9/update', { ...gone('ven-client'), operation: 'UPDATE' })).toBe(false);
  });

  it('never throws on a malformed message, and delivers no event whose targets it cannot read', () => {
    expect(mayReceive(ven, reach, 'openadr3/7/vens/v1/events/create', { objectType: 'EVENT', object: { targets: 'GROUP:north' } })).toBe(false);
    expect(mayReceive(ven, reach, 'openadr3/7/vens/v1/events/create', { objectType: 'EVENT', object: { targets: [1] } })).toBe(false);
    for (const message of [{}, { object: null }, { object: { targets: 'x' } }, { object: { targets: [1, null, {}] } }]) {
      expect(() => mayReceive(ven, reach, 'openadr3/7/vens/v1/events/create', message as never)).not.toThrow();
    }
    expect(mayReceive(ven, undefined, 'openadr3/7/vens/v1/events/create', event(null))).toBe(false);
  });
});

describe('mayRead', () => {
  it('reads targeted kinds by reach and the others by owner', () => {
    expect(targetedVisible([], new Set())).toBe(true);
    expect(mayRead(ven, reach, { kind: 'EVENT', targetKeys: [key('GROUP', 'north')], ownerClientId: null })).toBe(true);
    expect(mayRead(ven, reach, { kind: 'PROGRAM', targetKeys: [key('GROUP', 'south')], ownerClientId: null })).toBe(false);
    expect(mayRead(ven, reach, { kind: 'REPORT', targetKeys: [], ownerClientId: 'ven-client' })).toBe(true);
    expect(mayRead(ven, reach, { kind: 'SUBSCRIPTION', targetKeys: [], ownerClientId: 'other' })).toBe(false);
    expect(mayRead(ven, reach, { kind: 'VEN', targetKeys: [], ownerClientId: null })).toBe(false);
    expect(mayRead(bl, undefined, { kind: 'REPORT', targetKeys: [], ownerClientId: 'other' })).toBe(true);
  });
});
