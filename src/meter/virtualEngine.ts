// Virtual registers, computed on read (docs/virtual-registers.md).
import type { RegisterForRead } from './meterStore.ts';
import type { ReadingsQuery } from './readingsQuery.ts';

export interface VirtualEngine {
  /** The register's readings for the query, as a JSON array like the stored ones. */
  readingsJson(register: RegisterForRead, query: ReadingsQuery): Promise<string>;
}
