// Coverage: per register, a calendar of the chosen year's local days (the register's time zone)
// marked complete, partial or missing, computed from the readings as stored (GET /api/readings,
// fetched a month at a time so that minute data stays under the per-response point limit).
import { useMemo } from 'preact/hooks';
import { callText } from '../api/client.ts';
import type { Session } from '../api/session.ts';
import type { Register, RegisterReadings } from '../api/types.ts';
import { setParams } from '../app/route.ts';
import { useAsync } from '../app/useAsync.ts';
import { ErrorBox, Loading } from '../components/ErrorBox.tsx';
import { OrgPicker, chosenOrganization } from '../components/OrgPicker.tsx';
import { ParamInput } from '../components/ParamInput.tsx';
import { RegisterPicker } from '../components/RegisterPicker.tsx';
import { coverageByDay, localMidnight, type DayCoverage, type Interval } from '../data/coverage.ts';
import { registerLabel } from '../data/units.ts';
import { selectedIds, useMeters } from './Readings.tsx';

async function readingIntervals(org: number, register: Register, year: number): Promise<Interval[]> {
  const out: Interval[] = [];
  for (let month = 1; month <= 12; month += 1) {
    const start = localMidnight(register.timeZone, year, month, 1);
    const end = month === 12 ? localMidnight(register.timeZone, year + 1, 1, 1) : localMidnight(register.timeZone, year, month + 1, 1);
    const text = await callText('/api/readings', {
      query: { organizationId: org, registerId: register.id, start: new Date(start).toISOString(), end: new Date(end).toISOString(), resolution: 0 },
    });
    const body = JSON.parse(text) as RegisterReadings[];
    for (const r of body[0]?.readings ?? []) out.push({ start: Date.parse(r.timestamp), end: Date.parse(r.periodTo) });
  }
  return out;
}

const WEEKDAYS = ['Mon', '', 'Wed', '', 'Fri', '', 'Sun'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

function Calendar({ register, days }: { register: Register; days: DayCoverage[] }) {
  const first = new Date(`${days[0]!.day}T00:00:00Z`).getUTCDay();
  const offset = (first + 6) % 7; // Monday first
  const counts = { complete: 0, partial: 0, missing: 0, open: 0 };
  for (const d of days) counts[d.state] += 1;
  const cell = 13;
  const weeks = Math.ceil((days.length + offset) / 7);
  return (
    <figure class="calendar" data-register-id={register.id} data-testid={`coverage-${register.id}`}>
      <figcaption>
        <strong>{registerLabel(register)}</strong> <span class="muted">({register.timeZone})</span> · <span class="state-complete-text">{counts.complete} complete</span> · <span class="state-partial-text">{counts.partial} partial</span> ·{' '}
        <span class="state-missing-text">{counts.missing} missing</span>
        {counts.open ? ` · ${counts.open} not over yet` : ''}
      </figcaption>
      <svg width={30 + weeks * cell} height={20 + 7 * cell} role="img" aria-label={`Coverage of ${register.name}`}>
        {WEEKDAYS.map((w, i) => (
          <text x={0} y={20 + i * cell + 10} class="axis">
            {w}
          </text>
        ))}
        {days.map((d, i) => {
          const k = i + offset;
          const week = Math.floor(k / 7);
          const weekday = k % 7;
          const dayOfMonth = d.day.slice(8);
          return (
            <g>
              {dayOfMonth === '01' ? (
                <text x={30 + week * cell} y={10} class="axis">
                  {MONTHS[Number(d.day.slice(5, 7)) - 1]}
                </text>
              ) : null}
              <rect x={30 + week * cell} y={20 + weekday * cell} width={cell - 2} height={cell - 2} rx={2} class={`day state-${d.state}`} data-day={d.day} data-state={d.state}>
                <title>
                  {d.day}: {d.state} · {d.readings} readings · {(d.covered * 100).toFixed(1)}% of the day covered
                </title>
              </rect>
            </g>
          );
        })}
      </svg>
    </figure>
  );
}

export function Coverage({ session, params }: { session: Session; params: URLSearchParams }) {
  const org = chosenOrganization(session, params);
  const ids = selectedIds(params);
  const year = Number(params.get('year')) || new Date().getUTCFullYear();
  const meters = useMeters(org);
  const registers = meters.value?.registers ?? [];
  const chosen = useMemo(() => ids.map((id) => registers.find((r) => r.id === id)).filter((r): r is Register => r !== undefined), [registers, ids.join(',')]);
  const coverage = useAsync(
    org !== undefined && chosen.length > 0
      ? async () => {
          const out: { register: Register; days: DayCoverage[] }[] = [];
          for (const register of chosen) out.push({ register, days: coverageByDay(await readingIntervals(org, register, year), register.timeZone, year) });
          return out;
        }
      : undefined,
    [org, chosen, year],
  );

  return (
    <section class="coverage">
      <div class="controls">
        <OrgPicker session={session} value={org} />
        <ParamInput label="Year" param="year" type="number" min={1970} max={9999} value={year} testId="year" />
        <span class="legend">
          <i class="day state-complete" /> complete <i class="day state-partial" /> partial <i class="day state-missing" /> missing <i class="day state-open" /> not over yet
        </span>
      </div>
      {org === undefined ? <p class="notice">Choose an organization.</p> : null}
      <ErrorBox error={meters.error} what="Registers" />
      {meters.value ? <RegisterPicker meters={meters.value.meters} registers={registers} selected={ids} onChange={(next) => setParams({ r: next.join(',') })} /> : <Loading when={meters.loading} />}
      <Loading when={coverage.loading} what="Reading a year of readings…" />
      <ErrorBox error={coverage.error} what="Coverage" />
      {(coverage.value ?? []).map(({ register, days }) => (
        <Calendar register={register} days={days} />
      ))}
    </section>
  );
}
