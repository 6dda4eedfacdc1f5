// The demo's flexibility loop (docs/flexibility-loop.md), through the public API as the provider
// would run it: the battery's grid resource is bound to the VEN resource controlling it, so its
// transactions are dispatched to `ven-battery` as events of the zone's program; during them the
// VEN, not the meter, reports the battery's net energy (USAGE in KWH on each event), which
// becomes the readings delivery validation reads.
import type { DemoApi } from './api.ts';
import type { Delivery } from './plan.ts';
import type { SeriesData } from './profiles.ts';
import type { DemoWorld } from './types.ts';
import { LOOP } from './world.ts';

const iso = (ms: number) => new Date(ms).toISOString();
const QUARTER = 900_000;

/** The meter's series without the loop's delivery windows (the VEN reports those). */
export function withoutWindows(series: SeriesData, windows: readonly Delivery[]): SeriesData {
  const values = series.values.slice();
  for (const w of windows) for (let t = w.start; t < w.end; t += series.step) values[Math.round((t - series.start) / series.step)] = Number.NaN;
  return { ...series, values };
}

export interface LoopContext {
  polderId: number;
  polderToken: string;
  resourceId: number;
  vtn: DemoWorld['vtn'];
}

/** PUT the battery's binding to its VEN resource. */
export async function bindLoop(api: DemoApi, c: LoopContext): Promise<{ venID: string; venResourceID: string }> {
  const ven = c.vtn.vens.find((v) => v.venName === LOOP.ven)!;
  const venResourceID = ven.resources[LOOP.venResource]!;
  await api.call('PUT', `/api/grid/resource/${c.resourceId}/binding`, { token: c.polderToken, json: { organizationId: c.polderId, venID: ven.venID, resourceID: venResourceID } });
  return { venID: ven.venID, venResourceID };
}

interface Dispatched {
  id: number;
  start: string;
  end: string;
  resourceId: number;
  dispatch: { eventID: string | null; state: string } | null;
}

/** Waits until the battery's transactions are dispatched, then reports the VEN's usage during
 * each on its event and waits until every report is stored. */
export async function reportLoopUsage(api: DemoApi, c: LoopContext, market: { start: number; end: number }, series: SeriesData): Promise<Pick<DemoWorld['loop'], 'transactions' | 'events' | 'reports'>> {
  const period = `organizationId=${c.polderId}&start=${iso(market.start)}&end=${iso(market.end)}`;
  const deadline = Date.now() + 60_000;
  let mine: Dispatched[] = [];
  for (;;) {
    const list = await api.get<{ flexibilityTransactions: Dispatched[] }>(`/api/product/transaction/flexibility?${period}`, c.polderToken);
    mine = list.flexibilityTransactions.filter((t) => t.resourceId === c.resourceId);
    if (mine.every((t) => t.dispatch?.state === 'sent')) break;
    if (Date.now() > deadline) throw new Error('the battery’s transactions were not dispatched within a minute');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const ven = c.vtn.vens.find((v) => v.venName === LOOP.ven)!;
  const token = await api.token(ven.clientId, ven.clientSecret);
  const VTN = '/api/openadr/v1';
  const reports: string[] = [];
  for (const t of mine) {
    const event = await api.get<{ id: string; programID: string; eventName: string }>(`${VTN}/events/${t.dispatch!.eventID}`, token);
    const start = Date.parse(t.start);
    const intervals = [];
    for (let at = start, id = 0; at < Date.parse(t.end); at += QUARTER, id += 1) {
      intervals.push({ id, payloads: [{ type: 'USAGE', values: [series.values[Math.round((at - series.start) / series.step)]!] }] });
    }
    const report = await api.post<{ id: string }>(
      `${VTN}/reports`,
      {
        programID: event.programID,
        eventID: event.id,
        clientName: LOOP.ven,
        reportName: `Usage during ${event.eventName}`,
        payloadDescriptors: [{ objectType: 'REPORT_PAYLOAD_DESCRIPTOR', payloadType: 'USAGE', readingType: 'DIRECT_READ', units: 'KWH' }],
        resources: [{ resourceName: LOOP.venResource, intervalPeriod: { start: iso(start), duration: 'PT15M' }, intervals }],
      },
      token,
    );
    reports.push(report.id);
  }
  for (const id of reports) {
    for (;;) {
      const processing = await api.get<{ state: string }>(`${VTN}/reports/${id}/processing`, token);
      if (processing.state === 'stored') break;
      if (processing.state !== 'pending') throw new Error(`the VEN's report ${id} was ${processing.state}`);
      if (Date.now() > deadline) throw new Error('the VEN’s usage reports were not stored within a minute');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return { transactions: mine.length, events: mine.map((t) => t.dispatch!.eventID!), reports };
}

/** The settle step of the loop: the provider accepts its battery's validated lines but the
 * last, which it disputes; the grid operator resolves that dispute at a settled figure. */
export async function settleLoop(api: DemoApi, c: LoopContext & { operatorId: number; operatorToken: string }, market: { start: number; end: number }): Promise<{ accepted: number; resolved: number }> {
  const period = `organizationId=${c.polderId}&start=${iso(market.start)}&end=${iso(market.end)}`;
  const list = await api.get<{ flexibilityTransactions: { id: number; resourceId: number; deliveryValidationStatus: number }[] }>(`/api/product/transaction/flexibility?${period}`, c.polderToken);
  const lines = list.flexibilityTransactions.filter((t) => t.resourceId === c.resourceId && t.deliveryValidationStatus === 2);
  const disputed = lines[lines.length - 1];
  for (const t of lines.slice(0, -1)) {
    await api.post('/api/product/settlement/responses', { organizationId: c.polderId, flexibilityTransactionId: t.id, response: 'accepted' }, c.polderToken);
  }
  if (!disputed) return { accepted: 0, resolved: 0 };
  const { dispute } = await api.post<{ dispute: { id: number; disputedRemuneration: number } }>(
    '/api/product/settlement/responses',
    { organizationId: c.polderId, flexibilityTransactionId: disputed.id, response: 'disputed', reason: 'The battery’s own log shows more energy moved than the VEN reported' },
    c.polderToken,
  );
  const settled = Math.round(dispute.disputedRemuneration * 1.05 * 100) / 100;
  await api.post(`/api/product/settlement/disputes/${dispute.id}/resolution`, { organizationId: c.operatorId, totalRemuneration: settled, reason: 'Settled on 5 % more after comparing the logs' }, c.operatorToken, 200);
  return { accepted: lines.length - 1, resolved: 1 };
}
