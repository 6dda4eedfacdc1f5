// Meters and registers as the API serves them (meterSchema, registerSchema in schemas.ts). Types
// only, with no imports: the console (console/src/api/types.ts) uses them too.
export interface Meter {
  id: number;
  externalId: string;
  name: string;
  type: number;
  longitude: string | null;
  latitude: string | null;
  organizationsIds: number[];
}

export interface VirtualDefinition {
  id: number;
  calculationType: number;
  baselineAlgorithmType: number | null;
  timeZone: string | null;
  constant: number | null;
  sumPreviousValues: boolean;
  expression: string | null;
  timeOfDay: string | null;
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
  updateFrequency: number;
  isVirtual: boolean;
  meterId: number;
  timeZone: string;
  virtualDefinition: VirtualDefinition | null;
}
