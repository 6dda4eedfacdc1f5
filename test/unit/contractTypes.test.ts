// Contracts written once and checked by the compiler: permission, feature and scope names come
// from src/auth/catalogue.ts as literal types, a code table must describe every value of its
// enum, and a worker task's input and result are those of its entry point. Each
// `@ts-expect-error` below fails `npm run typecheck` (part of `npm test`) the day the mistake it
// shows compiles again.
import { describe, expect, it } from 'vitest';
import { FEATURES, PERMISSIONS, VTN_SCOPES, featureSchema, permissionSchema, scopeSchema } from '../../src/auth/catalogue.ts';
import { CODE_TABLES, MeterType, type CodeTable } from '../../src/codes.ts';
import type { AuthRequirement } from '../../src/http/types.ts';
import type { WorkerPool } from '../../src/workerPool.ts';
import type { VirtualResult } from '../../workers/virtual/task.ts';

describe('names from the catalogue', () => {
  it('a route naming a permission, feature or scope the catalogue lacks does not compile', () => {
    const fine: AuthRequirement = { permission: 'Meter.Organization.Read', feature: 'OpenADR', anyScope: ['read_all'] };
    // @ts-expect-error 'Organisation' is a typo: no such permission
    const permission: AuthRequirement = { permission: 'Meter.Organisation.Read' };
    // @ts-expect-error feature names are case-sensitive
    const feature: AuthRequirement = { feature: 'OpenAdr' };
    // @ts-expect-error not an OpenADR scope
    const scope: AuthRequirement = { anyScope: ['read_everything'] };
    expect([fine, permission, feature, scope]).toHaveLength(4);
  });

  it('publishes the same names in the schemas that refuse unknown ones', () => {
    expect(PERMISSIONS).toHaveLength(10);
    expect(permissionSchema.enum).toEqual([...PERMISSIONS]);
    expect(featureSchema.enum).toEqual([...FEATURES]);
    expect(scopeSchema.enum).toEqual([...VTN_SCOPES]);
  });
});

describe('code tables', () => {
  it('a table missing a value’s description does not compile', () => {
    // @ts-expect-error MeterType.Other (5) has no description
    const partial: CodeTable<MeterType> = { name: 'MeterType', description: '', values: { 1: 'a', 2: 'b', 3: 'c', 4: 'd' } };
    expect(partial.values).not.toHaveProperty(String(MeterType.Other));
  });

  it('every table describes every code it lists', () => {
    for (const table of CODE_TABLES) for (const [code, text] of Object.entries(table.values)) expect(text, `${table.name} ${code}`).toMatch(/\S/);
  });
});

describe('worker tasks', () => {
  it('take their entry point’s input and return its result', () => {
    const calls = (pool: WorkerPool): Promise<VirtualResult> => {
      // @ts-expect-error the readings task takes a ParseTask, not a virtual-register task
      void pool.run('readings/task', { kind: 'constant', length: 1, value: 0 });
      // @ts-expect-error no such task file
      void pool.run('readings/parse', {});
      return pool.run('virtual/task', { kind: 'constant', length: 1, value: 0 });
    };
    expect(calls).toBeTypeOf('function');
  });
});
