// The pure parts of the flexibility loop (docs/flexibility-loop.md): a transaction's setpoint,
// the event's duration text, and how a report's USAGE and DEMAND payloads read as timed samples
// (units, reading types, the interval's time from its own period, the resource's sequence or the
// event's interval of the same id), with the reason for each refusal.
import { describe, expect, it } from 'vitest';
import { setpointKw } from '../../src/products/dispatch.ts';
import { durationText, eventBody, programNameOf } from '../../src/vtn/flexibilityEvents.ts';
import { readResource, reportState } from '../../src/vtn/usageReports.ts';

const H = 3_600_000;
const T0 = Date.parse('2026-06-01T17:00:00Z');

describe('setpoint', () => {
  it('is the mean change of consumption in kW: negative upward, positive downward', () => {
    expect(setpointKw('40', 1, T0, T0 + H)).toBe(-40);
    expect(setpointKw('40', 2, T0, T0 + H)).toBe(40);
    expect(setpointKw('10', 2, T0, T0 + 0.75 * H)).toBe(13.333333);
    expect(setpointKw('10', 1, T0, T0 + 0.75 * H)).toBe(-13.333333);
    expect(setpointKw('0.5', 1, T0, T0 + 2 * H)).toBe(-0.25);
    // Half away from zero at the sixth decimal, exactly (no binary floating point on the way).
    expect(setpointKw('0.0000025', 2, T0, T0 + H)).toBe(0.000003);
    expect(setpointKw('0.0000025', 1, T0, T0 + H)).toBe(-0.000003);
  });
});

describe('the event', () => {
  it('writes durations as hours, minutes and seconds', () => {
    expect([900, 3600, 5400, 172_800, 3601, 0].map(durationText)).toEqual(['PT15M', 'PT1H', 'PT1H30M', 'PT48H', 'PT1H1S', 'PT0S']);
  });

  it('names the program after the zone, within OpenADR’s 128 characters', () => {
    expect(programNameOf('NL North')).toBe('NL North');
    expect([...programNameOf('Z'.repeat(127) + '€€')].length).toBe(128);
  });

  it('carries one interval with the setpoint, the targets and the correlation id', () => {
    const body = eventBody('p1', { venId: 'v', venResourceId: 'r', zoneName: 'NL North', correlationId: 'c-1', start: T0, end: T0 + H, setpointKw: -40 }, { venName: 'ven-1', resourceName: 'bat' });
    expect(body).toMatchObject({
      programID: 'p1',
      eventName: 'c-1',
      targets: [
        { type: 'VEN_NAME', values: ['ven-1'] },
        { type: 'RESOURCE_NAME', values: ['bat'] },
      ],
      intervalPeriod: { start: '2026-06-01T17:00:00.000Z', duration: 'PT1H' },
      intervals: [{ id: 0, payloads: [{ type: 'DISPATCH_SETPOINT_RELATIVE', values: [-40] }] }],
    });
  });
});

describe('usage in a report', () => {
  const usage = (v: unknown) => ({ type: 'USAGE', values: [v] });
  const event = {
    intervalPeriod: { start: '2026-06-01T17:00:00Z', duration: 'PT1H' },
    intervals: [{ id: 0, payloads: [] }],
    reportDescriptors: [{ payloadType: 'USAGE', units: 'KWH' }],
  };

  it('times intervals by their own period, the resource’s sequence, or the event’s interval with the same id', () => {
    const doc = {
      payloadDescriptors: [{ payloadType: 'USAGE', units: 'KWH' }],
      resources: [
        { resourceName: 'a', intervalPeriod: { start: '2026-06-01T17:00:00Z', duration: 'PT15M' }, intervals: [0, 1, 2].map((id) => ({ id, payloads: [usage(id + 1)] })) },
        { resourceName: 'b', intervals: [{ id: 5, intervalPeriod: { start: '2026-06-01T18:00:00Z', duration: 'PT30M' }, payloads: [usage(2)] }, { id: 0, payloads: [usage(9)] }] },
      ],
    };
    expect(readResource(doc, event, 0)).toEqual({
      samples: [0, 1, 2].map((i) => ({ start: T0 + i * 900_000, seconds: 900, kind: 'energy', value: i + 1 })),
      refused: [],
    });
    expect(readResource(doc, event, 1).samples).toEqual([
      { start: T0 + H, seconds: 1800, kind: 'energy', value: 2 },
      { start: T0, seconds: 3600, kind: 'energy', value: 9 },
    ]);
  });

  it('takes units from the report’s descriptors, else from the event’s request; DEMAND is power', () => {
    const doc = { resources: [{ resourceName: 'a', intervals: [{ id: 0, payloads: [usage(3)] }, { id: 0, intervalPeriod: { start: '2026-06-01T17:00:00Z', duration: 'P1D' }, payloads: [{ type: 'DEMAND', values: [2] }] }] }] };
    const read = readResource(doc, event, 0);
    expect(read.samples[0]).toEqual({ start: T0, seconds: 3600, kind: 'energy', value: 3 });
    expect(read.refused).toEqual([{ path: 'resources[0].intervals[1].payloads[0]', reason: 'DEMAND has no units: give them in a payloadDescriptor (KW)' }]);
    const withUnits = readResource({ ...doc, payloadDescriptors: [{ payloadType: 'DEMAND', units: 'kw', readingType: 'MEAN' }] }, event, 0);
    expect(withUnits.samples[1]).toEqual({ start: T0, seconds: 86_400, kind: 'power', value: 2 });
  });

  it('refuses, with the reason, what is not a measurement of the interval', () => {
    const doc = {
      payloadDescriptors: [
        { payloadType: 'USAGE', units: 'WH' },
        { payloadType: 'DEMAND', units: 'KW', readingType: 'FORECAST' },
      ],
      resources: [
        {
          resourceName: 'a',
          intervals: [
            { id: 0, intervalPeriod: { start: '2026-06-01T17:00:00Z', duration: 'PT15M' }, payloads: [usage(1)] },
            { id: 1, intervalPeriod: { start: '2026-06-01T17:00:00Z', duration: 'PT15M' }, payloads: [{ type: 'DEMAND', values: [1] }] },
            { id: 9, payloads: [{ type: 'SIMPLE_LEVEL', values: [1] }] },
          ],
        },
        {
          resourceName: 'b',
          intervals: [
            { id: 3, payloads: [{ type: 'DEMAND', values: [1, 2] }] },
            { id: 4, intervalPeriod: { start: '2026-06-01T17:00:00Z', duration: 'PT0S' }, payloads: [{ type: 'DEMAND', values: [1] }] },
            { id: 7, payloads: [{ type: 'DEMAND', values: [1] }] },
          ],
        },
      ],
    };
    const reasons = (r: number) => readResource({ ...doc, payloadDescriptors: r === 0 ? doc.payloadDescriptors : [{ payloadType: 'DEMAND', units: 'KW' }] }, event, r).refused.map((x) => x.reason);
    expect(reasons(0)).toEqual([expect.stringMatching(/^USAGE in WH does not map to a register: send KWH$/), expect.stringMatching(/^reading type FORECAST is not a measurement/)]);
    expect(reasons(1)).toEqual(['the payload must hold one number', 'the interval has no duration', expect.stringMatching(/no intervalPeriod, nor has the resource or the event an interval with its id/)]);
  });

  it('states a report by its resources: stored, partly stored, refused', () => {
    const r = (state: 'stored' | 'partly stored' | 'refused', readings: number) => ({ resourceName: 'x', state, readings, reason: null, refused: [] });
    expect(reportState([r('stored', 4), r('stored', 0)])).toBe('stored');
    expect(reportState([r('stored', 4), r('refused', 0)])).toBe('partly stored');
    expect(reportState([r('refused', 0)])).toBe('refused');
    expect(reportState([r('stored', 0)])).toBe('refused');
  });
});
