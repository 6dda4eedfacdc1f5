// Checks of a register create/replace beyond its schema: the meter exists, the time zone is a
// real IANA zone, a virtual register has a coherent definition (its expression parses and names
// only its sources, its sources exist and never lead back to it), and a register that holds
// readings does not become virtual. Returns the parsed expression, stored with the register.
import { badRequest, conflict, type FieldError } from '../http/errors.ts';
import type { Queryable } from '../store/database.ts';
import type { TimeSeriesStore } from '../store/timeseries/types.ts';
import { parseExpression, type Expr } from '../shared/virtual/expression.ts';
import { isValidTimeZone } from '../shared/virtual/time.ts';
import { sourceVariables } from '../shared/virtual/contract.ts';
import { CalculationType } from '../codes.ts';
import { assertSourcesAcyclic, getMeter, getRegister, type RegisterInput } from './meterStore.ts';

const P = 'virtualDefinition';

export async function validateRegisterInput(db: Queryable, store: TimeSeriesStore, selfId: number | undefined, input: RegisterInput): Promise<{ ast: Expr | undefined }> {
  const errors: FieldError[] = [];
  if (!(await getMeter(db, input.meterId))) errors.push({ path: 'meterId', message: `meter ${input.meterId} does not exist` });
  if (!isValidTimeZone(input.timeZone)) errors.push({ path: 'timeZone', message: `${JSON.stringify(input.timeZone)} is not an IANA time zone` });
  const def = input.virtualDefinition;
  let ast: Expr | undefined;
  if (!input.isVirtual && def) errors.push({ path: P, message: 'only virtual registers (isVirtual: true) have a virtual definition' });
  if (input.isVirtual && !def) errors.push({ path: P, message: 'is required when isVirtual is true' });
  if (input.isVirtual && def) {
    const sources = def.sourceRegisters;
    if (def.timeZone !== null && !isValidTimeZone(def.timeZone)) errors.push({ path: `${P}.timeZone`, message: `${JSON.stringify(def.timeZone)} is not an IANA time zone` });
    if (def.timeOfDay !== null && !def.sumPreviousValues) errors.push({ path: `${P}.timeOfDay`, message: 'is the daily restart of the running total: set sumPreviousValues to use it' });
    if (selfId !== undefined && sources.includes(selfId)) errors.push({ path: `${P}.sourceRegisters`, message: 'must not contain the register itself' });
    switch (def.calculationType) {
      case CalculationType.Expression: {
        if (sources.length === 0) errors.push({ path: `${P}.sourceRegisters`, message: 'an expression needs at least one source register (r0)' });
        if (!def.expression) errors.push({ path: `${P}.expression`, message: 'is required for calculationType 1 (expression)' });
        else {
          const parsed = parseExpression(def.expression, sourceVariables(sources.length));
          if (parsed.ok) ast = parsed.ast;
          else errors.push({ path: `${P}.expression`, message: `${parsed.message} (at character ${parsed.position})` });
        }
        break;
      }
      case CalculationType.Constant:
        if (def.constant === null) errors.push({ path: `${P}.constant`, message: 'is required for calculationType 2 (constant)' });
        break;
      case CalculationType.Baseline:
        if (def.baselineAlgorithmType === null) errors.push({ path: `${P}.baselineAlgorithmType`, message: 'is required for calculationType 3 (baseline)' });
        if (sources.length !== 1) errors.push({ path: `${P}.sourceRegisters`, message: 'a baseline has exactly one source register' });
        break;
    }
  }
  if (errors.length > 0) throw badRequest('Invalid register', errors);
  if (input.isVirtual && def) await assertSourcesAcyclic(db, selfId, def.sourceRegisters);
  if (selfId !== undefined) {
    const current = await getRegister(db, selfId);
    if (current && current.isVirtual !== input.isVirtual && (await store.hasReadings(selfId))) {
      throw conflict('A register that holds readings cannot change between stored and virtual');
    }
  }
  return { ast };
}

