// The provider's VTN through the OpenADR API, as its systems would fill it: the business-logic
// credential creates the programs and the VENs (each bound to its own VEN credential) with
// their resources; each VEN subscribes with its own token; then the events are created, so the
// subscriptions are notified of them (by webhook, and over MQTT to whoever listens).
import type { DemoApi } from './api.ts';
import type { DemoPlan } from './plan.ts';
import type { DemoOrganization, DemoWorld } from './types.ts';
import type { OrganizationKey } from './world.ts';

const iso = (ms: number) => new Date(ms).toISOString();

export interface VtnContext {
  admin: string;
  organizations: Record<OrganizationKey, DemoOrganization>;
  venCallbackUrl: string | undefined;
}

/** Creates the plan's VTN objects; returns the VENs' credentials and the subscriptions. */
export async function demandResponse(api: DemoApi, plan: DemoPlan, c: VtnContext): Promise<DemoWorld['vtn']> {
  const v = plan.vtn;
  const organizationId = c.organizations[v.owner].id;
  const VTN = '/api/openadr/v1';
  const credential = async (name: string, scopes: string[]) => {
    const created = await api.post('/api/openadr/vtn/credential', { organizationId, name, scopes }, c.admin, 200);
    return { clientId: created.clientId as string, clientSecret: created.clientSecret as string, token: await api.token(created.clientId, created.clientSecret) };
  };
  const bl = await credential(v.businessLogic.name, v.businessLogic.scopes);
  const programs: Record<string, string> = {};
  for (const p of v.programs) {
    const created = await api.post(
      `${VTN}/programs`,
      { programName: p.programName, programLongName: p.programLongName, payloadDescriptors: [{ objectType: 'EVENT_PAYLOAD_DESCRIPTOR', payloadType: p.payloadType, units: p.units ?? null, currency: p.payloadType === 'PRICE' ? 'EUR' : null }] },
      bl.token,
    );
    programs[p.programName] = created.id;
  }
  const vens: DemoWorld['vtn']['vens'] = [];
  const subscriptionIds: string[] = [];
  for (const ven of v.vens) {
    const cred = await credential(ven.venName, ven.scopes);
    const created = await api.post(`${VTN}/vens`, { venName: ven.venName, clientID: cred.clientId }, bl.token);
    const resources: Record<string, string> = {};
    for (const resourceName of ven.resources) resources[resourceName] = (await api.post(`${VTN}/vens/${created.id}/resources`, { resourceName }, bl.token)).id;
    vens.push({ venName: ven.venName, venID: created.id, clientId: cred.clientId, clientSecret: cred.clientSecret, resources });
    for (const program of c.venCallbackUrl ? ven.subscribesTo : []) {
      const sub = await api.post(
        `${VTN}/subscriptions`,
        { clientName: ven.venName, programID: programs[program], objectOperations: [{ objects: ['EVENT'], operations: ['POST', 'PUT', 'DELETE'], callbackUrl: `${c.venCallbackUrl}/${ven.venName}` }] },
        cred.token,
      );
      subscriptionIds.push(sub.id);
    }
  }
  for (const e of v.events) {
    await api.post(
      `${VTN}/events`,
      {
        programID: programs[e.program],
        eventName: e.eventName,
        intervalPeriod: { start: iso(e.start), duration: e.duration },
        intervals: e.intervals.map((payload, id) => ({ id, payloads: [payload] })),
        ...(e.targets.length ? { targets: [{ type: 'VEN_NAME', values: e.targets }] } : {}),
      },
      bl.token,
    );
  }
  return { organization: v.owner, vens, subscriptionIds };
}
