// Builders for the identity objects most tests need, made through the real admin and token APIs.
import type { Api } from './testApp.ts';

export interface OrgClient {
  organizationId: number;
  roleId: number;
  clientId: string;
  clientSecret: string;
  id: number;
  token: string;
}

let counter = 0;
const unique = (prefix: string) => `${prefix}-${process.pid}-${++counter}`;

export async function createOrganization(api: Api, admin: string, features: string[] = []): Promise<number> {
  const res = await api.post('/api/admin/organizations', { name: unique('org'), features }, admin);
  if (res.status !== 201) throw new Error(`create organization: ${res.status} ${res.text}`);
  return res.body.id;
}

export async function createRole(api: Api, admin: string, permissions: string[]): Promise<number> {
  const res = await api.post('/api/admin/roles', { name: unique('role'), permissions }, admin);
  if (res.status !== 201) throw new Error(`create role: ${res.status} ${res.text}`);
  return res.body.id;
}

export async function fetchToken(api: Api, clientId: string, clientSecret: string, extra: Record<string, string> = {}): Promise<string> {
  const res = await api.request('POST', '/oauth/token', {
    form: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, audience: 'flex-api', ...extra },
  });
  if (res.status !== 200) throw new Error(`token: ${res.status} ${res.text}`);
  return res.body.access_token;
}

/** An organization with the given features, a role with the given permissions, and a client
 * holding that role, with an access token. */
export async function createOrgClient(api: Api, admin: string, options: { features?: string[]; permissions: string[]; organizationId?: number }): Promise<OrgClient> {
  const organizationId = options.organizationId ?? (await createOrganization(api, admin, options.features ?? []));
  const roleId = await createRole(api, admin, options.permissions);
  const res = await api.post(`/api/organization/${organizationId}/client`, { clientName: unique('client'), rolesIds: [roleId] }, admin);
  if (res.status !== 200) throw new Error(`create client: ${res.status} ${res.text}`);
  const token = await fetchToken(api, res.body.clientId, res.body.clientSecret);
  return { organizationId, roleId, clientId: res.body.clientId, clientSecret: res.body.clientSecret, id: res.body.id, token };
}
