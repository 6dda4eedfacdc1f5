// What seeding the demo gives back: every id, credential and console link of the world
// (written to DATA_DIR/demo.json by demo.ts).
import type { OrganizationKey, ResourceKey } from './world.ts';

export interface DemoOrganization {
  id: number;
  name: string;
  clientId: string;
  clientSecret: string;
}

export interface DemoWorld {
  /** When the world was seeded and how long it took (ms). */
  seededAt: string;
  seconds: number;
  readings: number;
  /** The console user: a global administrator in the VTN's organization. */
  analyst: { name: string; token: string };
  organizations: Record<OrganizationKey, DemoOrganization>;
  /** Register ids by `METER/REGISTER` externalIds. */
  registers: Record<string, number>;
  resources: Record<ResourceKey, number>;
  marketZoneId: number;
  market: { start: string; end: string; flexibilityTransactions: number; availabilityTransactions: number; validated: number; settled: number };
  vtn: { organization: OrganizationKey; vens: { venName: string; venID: string; clientId: string; clientSecret: string; resources: Record<string, string> }[]; subscriptionIds: string[] };
  /** The bound resource whose loop can be followed: its transactions' events and the VEN's usage reports. */
  loop: { resource: ResourceKey; venID: string; venResourceID: string; transactions: number; events: string[]; reports: string[]; accepted: number; resolved: number };
  /** Console pages that show the world (paths below the server's base URL). */
  links: { readings: string; coverage: string; demandResponse: string; market: string; loop: string };
}
