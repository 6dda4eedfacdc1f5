// SQL for grid resources. Rows come back shaped as the interface's Grid resource.
import { badRequest, type FieldError } from '../http/errors.ts';
import { virtualByRegister } from '../meter/meterStore.ts';
import { rowReader, type Queryable } from '../store/database.ts';

export interface Pod {
  podId: string;
  name: string;
  description: string | null;
}

export interface GridResource {
  id: number;
  organizationId: number;
  marketZoneId: number | null;
  concessionAreaId: number | null;
  createdAt: Date;
  createdBy: string;
  connectedAt: Date | null;
  name: string;
  longitude: string | null;
  latitude: string | null;
  contactInformation: string | null;
  type: number;
  regulationType: number;
  maxQuantity: number;
  endurance: number | null;
  cooldown: number | null;
  useZeroReference: boolean;
  actualRegisterId: number | null;
  referenceRegisterId: number | null;
  conditionalDeliveryLimit: number | null;
  conditionalUseDynamicDeliveryLimit: boolean;
  conditionalAutomaticAcknowledgement: boolean;
  allowedProducts: number[];
  pods: Pod[];
  /** The VEN resource controlling it in its owner's VTN (bindings.ts), or null. */
  binding: { venID: string; resourceID: string } | null;
}

export type GridResourceInput = Omit<GridResource, 'id' | 'createdAt' | 'createdBy' | 'connectedAt' | 'binding'> & { connectedAt: string | null };

const COLUMNS = `id, organization_id AS "organizationId", market_zone_id AS "marketZoneId", concession_area_id AS "concessionAreaId",
  created_at AS "createdAt", created_by AS "createdBy", connected_at AS "connectedAt", name, longitude, latitude,
  contact_information AS "contactInformation", type, regulation_type AS "regulationType", max_quantity AS "maxQuantity",
  endurance, cooldown, use_zero_reference AS "useZeroReference", actual_register_id AS "actualRegisterId",
  reference_register_id AS "referenceRegisterId", conditional_delivery_limit AS "conditionalDeliveryLimit",
  conditional_use_dynamic_delivery_limit AS "conditionalUseDynamicDeliveryLimit",
  conditional_automatic_acknowledgement AS "conditionalAutomaticAcknowledgement", allowed_products AS "allowedProducts", pods,
  (SELECT json_build_object('venID', b.ven_id, 'resourceID', b.ven_resource_id) FROM grid_resource_bindings b WHERE b.resource_id = grid_resources.id) AS binding`;

const VALUES = (i: GridResourceInput) => [
  i.organizationId,
  i.marketZoneId,
  i.concessionAreaId,
  i.connectedAt,
  i.name,
  i.longitude,
  i.latitude,
  i.contactInformation,
  i.type,
  i.regulationType,
  i.maxQuantity,
  i.endurance,
  i.cooldown,
  i.useZeroReference,
  i.actualRegisterId,
  i.referenceRegisterId,
  i.conditionalDeliveryLimit,
  i.conditionalUseDynamicDeliveryLimit,
  i.conditionalAutomaticAcknowledgement,
  [...new Set(i.allowedProducts)],
  JSON.stringify(i.pods),
];

const resourcesReader = rowReader<GridResource>(`SELECT ${COLUMNS} FROM grid_resources`);
export const listResources = resourcesReader.list;
export const getResource = resourcesReader.get;

export async function resourcesOfOrganization(db: Queryable, organizationId: number, marketZoneId: number | undefined): Promise<GridResource[]> {
  const { rows } = await db.query<GridResource>(
    `SELECT ${COLUMNS} FROM grid_resources WHERE organization_id = $1 AND ($2::int IS NULL OR market_zone_id = $2) ORDER BY id`,
    [organizationId, marketZoneId ?? null],
  );
  return rows;
}

/** The organization and registers named by a resource must exist; the registers must be stored
 * (not virtual) for the actual one. */
export async function checkResourceInput(db: Queryable, input: GridResourceInput): Promise<void> {
  const errors: FieldError[] = [];
  const { rows: org } = await db.query('SELECT 1 FROM organizations WHERE id = $1', [input.organizationId]);
  if (org.length === 0) errors.push({ path: 'organizationId', message: `organization ${input.organizationId} does not exist` });
  const ids = [input.actualRegisterId, input.referenceRegisterId].filter((x): x is number => x !== null);
  const known = await virtualByRegister(db, ids);
  if (input.actualRegisterId !== null && !known.has(input.actualRegisterId)) errors.push({ path: 'actualRegisterId', message: `register ${input.actualRegisterId} does not exist` });
  if (input.actualRegisterId !== null && known.get(input.actualRegisterId)) errors.push({ path: 'actualRegisterId', message: 'must be a register with measured readings, not a virtual one' });
  if (input.referenceRegisterId !== null && !known.has(input.referenceRegisterId)) errors.push({ path: 'referenceRegisterId', message: `register ${input.referenceRegisterId} does not exist` });
  const podIds = input.pods.map((p) => p.podId);
  podIds.forEach((id, i) => {
    if (podIds.indexOf(id) !== i) errors.push({ path: `pods[${i}].podId`, message: `duplicate pod ${JSON.stringify(id)}` });
  });
  if (errors.length > 0) throw badRequest('Invalid grid resource', errors);
}

export async function createResource(db: Queryable, input: GridResourceInput, createdBy: string): Promise<GridResource> {
  const { rows } = await db.query<GridResource>(
    `INSERT INTO grid_resources (organization_id, market_zone_id, concession_area_id, connected_at, name, longitude, latitude, contact_information,
       type, regulation_type, max_quantity, endurance, cooldown, use_zero_reference, actual_register_id, reference_register_id,
       conditional_delivery_limit, conditional_use_dynamic_delivery_limit, conditional_automatic_acknowledgement, allowed_products, pods, created_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22) RETURNING ${COLUMNS}`,
    [...VALUES(input), createdBy],
  );
  return rows[0]!;
}

export async function updateResource(db: Queryable, id: number, input: GridResourceInput): Promise<GridResource | undefined> {
  const { rows } = await db.query<GridResource>(
    `UPDATE grid_resources SET organization_id = $1, market_zone_id = $2, concession_area_id = $3, connected_at = $4, name = $5, longitude = $6,
       latitude = $7, contact_information = $8, type = $9, regulation_type = $10, max_quantity = $11, endurance = $12, cooldown = $13,
       use_zero_reference = $14, actual_register_id = $15, reference_register_id = $16, conditional_delivery_limit = $17,
       conditional_use_dynamic_delivery_limit = $18, conditional_automatic_acknowledgement = $19, allowed_products = $20, pods = $21, updated_at = now()
     WHERE id = $22 RETURNING ${COLUMNS}`,
    [...VALUES(input), id],
  );
  return rows[0];
}

export async function deleteResource(db: Queryable, id: number): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM grid_resources WHERE id = $1', [id]);
  return rowCount === 1;
}
