// The API's objects as the console reads them (the OpenAPI document is the contract; these are
// the fields the console uses).

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

export interface Meter {
  id: number;
  externalId: string;
  name: string;
  type: number;
  organizationsIds: number[];
}

export interface VirtualDefinition {
  calculationType: number;
  baselineAlgorithmType: number | null;
  expression: string | null;
  sourceRegisters: number[];
}

export interface Register {
  id: number;
  externalId: string;
  name: string;
  type: number;
  measurementType: number;
  measurementPrefix: number;
  defaultResolution: number;
  isVirtual: boolean;
  meterId: number;
  timeZone: string;
  virtualDefinition: VirtualDefinition | null;
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
