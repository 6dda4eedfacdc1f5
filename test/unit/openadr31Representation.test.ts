// The OpenADR 3.1 ↔ 3.0.1 representation mapping (src/vtn/v31/representation.ts) and the MQTT
// topic rules (src/vtn/mqttTopics.ts): pure functions.
import { describe, expect, it } from 'vitest';
import { operationTopics, subscriptionAllowed } from '../../src/vtn/mqttTopics.ts';
import { targetKeys } from '../../src/vtn/targets.ts';
import { notification31, targetsTo301, targetsTo31, to31 } from '../../src/vtn/v31/representation.ts';

describe('OpenADR 3.1 representation', () => {
  it('maps plain and typed target strings to valuesMaps and back', () => {
    const mapped = targetsTo301(['group-1', 'GROUP:north', 'GROUP:south', 'VEN_NAME:ven-1', 'urn:x:y', 'Mixed:case', 'group-1']);
    expect(mapped).toEqual([
      { type: 'TARGET', values: ['group-1', 'urn:x:y', 'Mixed:case'] },
      { type: 'GROUP', values: ['north', 'south'] },
      { type: 'VEN_NAME', values: ['ven-1'] },
    ]);
    expect(targetsTo31(mapped)).toEqual(['group-1', 'urn:x:y', 'Mixed:case', 'GROUP:north', 'GROUP:south', 'VEN_NAME:ven-1']);
    expect(targetsTo301(null)).toBeNull();
    expect(targetsTo301(undefined)).toBeUndefined();
    expect(targetsTo301([])).toEqual([]);
  });

  it('gives 3.0.1 targets that are not text a text form that matches the same keys', () => {
    const stored = [{ type: 'GROUP', values: [5, true, 'a'] }];
    const strings = targetsTo31(stored)!;
    expect(strings).toEqual(['GROUP:5', 'GROUP:true', 'GROUP:a']);
    expect(targetKeys(targetsTo301(strings))).toEqual(targetKeys(stored));
  });

  it('serves objects in 3.1 shape', () => {
    const subscription = to31('SUBSCRIPTION', { id: 's', objectType: 'SUBSCRIPTION', objectOperations: [{ objects: ['EVENT'], operations: ['GET', 'POST', 'PUT', 'DELETE'], callbackUrl: 'https://x' }], targets: null }, { clientID: 'c1' });
    expect(subscription).toMatchObject({ objectOperations: [{ operations: ['READ', 'CREATE', 'UPDATE', 'DELETE'] }], clientID: 'c1', targets: null });
    const ven = to31('VEN', { id: 'v', objectType: 'VEN', venName: 'v', clientID: null, resources: [{ id: 'r' }] });
    expect(ven).toEqual({ id: 'v', objectType: 'VEN', venName: 'v' });
    const event = to31('EVENT', { id: 'e', programID: 'p', payloadDescriptors: [{ payloadType: 'PRICE' }], reportDescriptors: [{ payloadType: 'USAGE', targets: [{ type: 'TARGET', values: ['a'] }] }] }, { ext: { duration: 'PT1H' } });
    expect(event).toMatchObject({ duration: 'PT1H', payloadDescriptors: [{ objectType: 'EVENT_PAYLOAD_DESCRIPTOR' }], reportDescriptors: [{ targets: ['a'] }] });
    const program = to31('PROGRAM', { id: 'p', programName: 'p', payloadDescriptors: [{ payloadType: 'USAGE', readingType: 'DIRECT_READ' }, { payloadType: 'PRICE' }] });
    expect(program.payloadDescriptors.map((d: { objectType: string }) => d.objectType)).toEqual(['REPORT_PAYLOAD_DESCRIPTOR', 'EVENT_PAYLOAD_DESCRIPTOR']);
    expect(notification31('EVENT', 'POST', { id: 'e', targets: ['a'] })).toEqual({ objectType: 'EVENT', operation: 'CREATE', object: { id: 'e', targets: ['a'] }, targets: ['a'] });
  });
});

describe('MQTT topics', () => {
  it('names collection and per-object topics', () => {
    expect(operationTopics(7, 'vens/v1/events')).toEqual({ CREATE: 'openadr3/7/vens/v1/events/create', UPDATE: 'openadr3/7/vens/v1/events/update', DELETE: 'openadr3/7/vens/v1/events/delete', ALL: 'openadr3/7/vens/v1/events/+' });
    expect(operationTopics(7, 'programs/p1', false).CREATE).toBeUndefined();
  });

  it('lets a VEN client subscribe only under its own VENs, a business-logic client anywhere in its organization', () => {
    const own = new Set(['v1']);
    expect(subscriptionAllowed('openadr3/7/vens/v1/events/+', 7, true, own)).toBe(true);
    expect(subscriptionAllowed('openadr3/7/vens/v1/#', 7, true, own)).toBe(true);
    for (const filter of ['openadr3/7/vens/v2/events/+', 'openadr3/7/vens/+/events/+', 'openadr3/7/vens/#', 'openadr3/7/events/+', 'openadr3/7/#', '#', 'openadr3/+/vens/v1/#', 'openadr3/8/vens/v1/#', 'openadr3/7/vens', 'openadr3/7']) {
      expect(subscriptionAllowed(filter, 7, true, own), filter).toBe(false);
    }
    expect(subscriptionAllowed('openadr3/7/#', 7, false, new Set())).toBe(true);
    expect(subscriptionAllowed('openadr3/8/#', 7, false, new Set())).toBe(false);
    expect(subscriptionAllowed('#', 7, false, new Set())).toBe(false);
  });
});
