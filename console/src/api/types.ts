// The API's objects as the console reads them (the OpenAPI document is the contract; these are
// the fields the console uses). Meters and registers are the server's own types (types only:
// nothing of the server is bundled).
export type { Meter, Register } from '../../../src/meter/meterTypes.ts';

export interface Me {
  kind: 'client' | 'vtn' | 'user';
  subject: string;
  organizationId: number | null;
  globalAdmin: boolean;
  permissions: string[];
  scopes: string[];
  features: string[];
}

export interface Organization {
  id: number;
  name: string;
  features: string[];
}

export interface Reading {
  timestamp: string;
  periodTo: string;
  updatedAt: string;
  value: number;
  resolution: number;
}

export interface RegisterReadings {
  registerId: number;
  readings: Reading[];
}
