// Regression: problem details quoted PostgreSQL (`…referenced from table
// "api_client_roles"`, `Key (name)=(x) already exists`, `invalid input syntax for type json`).
// They now say what the client did wrong in our own words.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyPgError } from '../../src/store/database.ts';
import { createOrgClient } from '../support/fixtures.ts';
import { DATABASE_WORDS } from '../support/problems.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t?.close());


describe('error details', () => {
  it('say in our words that a role is still used', async () => {
    const client = await createOrgClient(t.api, t.adminToken, { permissions: ['Meter.Organization.Read'] });
    const res = await t.api.delete(`/api/admin/roles/${client.roleId}`, t.adminToken);
    expect(res.status, res.text).toBe(409);
    expect(res.body.detail).not.toMatch(DATABASE_WORDS);
    expect(res.body.detail).not.toMatch(/api_client_roles/);
  });

  it('say in our words that a name is taken', async () => {
    await t.api.post('/api/admin/roles', { name: 'twice', permissions: [] }, t.adminToken);
    const res = await t.api.post('/api/admin/roles', { name: 'twice', permissions: [] }, t.adminToken);
    expect(res.status, res.text).toBe(409);
    expect(res.body.detail).not.toMatch(DATABASE_WORDS);
  });

  it('never pass a database message through', () => {
    const pgError = (code: string, message: string, detail?: string) => Object.assign(new Error(message), { code, detail, table: 't', constraint: 'c' });
    for (const err of [
      pgError('23505', 'duplicate key value violates unique constraint "roles_name_key"', 'Key (name)=(x) already exists.'),
      pgError('23503', 'update or delete on table "roles" violates foreign key constraint "api_client_roles_role_id_fkey" on table "api_client_roles"', 'Key (id)=(4) is still referenced from table "api_client_roles".'),
      pgError('23503', 'insert or update on table "x" violates foreign key constraint "y"', 'Key (role_id)=(9) is not present in table "roles".'),
      pgError('23514', 'new row for relation "orders" violates check constraint "orders_quantity_check"'),
      pgError('23502', 'null value in column "name" of relation "roles" violates not-null constraint'),
      pgError('22P02', 'invalid input syntax for type json'),
      pgError('22003', 'value "99999999999" is out of range for type integer'),
      pgError('22007', 'invalid input syntax for type timestamp with time zone: "x"'),
      pgError('22008', 'date/time field value out of range: "x"'),
      pgError('22021', 'invalid byte sequence for encoding "UTF8": 0x00'),
      pgError('22P05', 'unsupported Unicode escape sequence'),
      pgError('22001', 'value too long for type character varying(10)'),
      pgError('54000', 'index row size 9000 exceeds btree version 4 maximum 2704 for index "x"'),
    ]) {
      const classified = classifyPgError(err);
      expect(classified, (err as Error).message).toBeDefined();
      expect(classified!.detail, (err as Error).message).not.toMatch(DATABASE_WORDS);
    }
  });
});
