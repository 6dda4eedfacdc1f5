// Units of registers from the API's code tables (MeasurementType, MeasurementPrefix; published
// in the OpenAPI document). test/unit/consoleData.test.ts checks them against src/codes.ts.
import type { Register } from '../api/types.ts';

export const MEASUREMENT_UNITS: Readonly<Record<number, string>> = {
  1: 'Wh',
  2: 'varh',
  3: 'W',
  4: 'var',
  5: 'V',
  6: 'A',
  7: '°C',
  8: 'm³',
  9: 'm³/h',
  10: 'price',
  11: '',
};

export const PREFIXES: Readonly<Record<number, string>> = { [-3]: 'm', 0: '', 3: 'k', 6: 'M', 9: 'G' };

export function unitOf(register: Pick<Register, 'measurementType' | 'measurementPrefix'>): string {
  const unit = MEASUREMENT_UNITS[register.measurementType] ?? '';
  if (!unit || unit === 'price') return unit;
  return `${PREFIXES[register.measurementPrefix] ?? ''}${unit}`;
}

/** The label of a register in the legend, the table and the CSV header. */
export function registerLabel(register: Pick<Register, 'id' | 'name' | 'measurementType' | 'measurementPrefix'>): string {
  const unit = unitOf(register);
  return `#${register.id} ${register.name}${unit ? ` (${unit})` : ''}`;
}

/** Product, clearing and delivery-validation codes (ProductType, ClearingStatus,
 * DeliveryValidationStatus in the OpenAPI document), as short labels. */
export const PRODUCT_TYPES: Readonly<Record<number, string>> = { 1: 'Flexibility up', 2: 'Flexibility down', 3: 'Availability up', 4: 'Availability down' };
export const CLEARING_STATUSES: Readonly<Record<number, string>> = { 1: 'Open', 2: 'Cleared', 3: 'Partially cleared', 4: 'Not cleared', 5: 'Accepted', 6: 'Rejected', 7: 'Cancelled' };
export const DELIVERY_STATUSES: Readonly<Record<number, string>> = { 1: 'Pending', 2: 'Validated', 3: 'Missing actual data', 4: 'Missing reference data', 5: 'Not measurable' };

export const codeLabel = (table: Readonly<Record<number, string>>, code: number | null | undefined) => (code === null || code === undefined ? '—' : (table[code] ?? `code ${code}`));
