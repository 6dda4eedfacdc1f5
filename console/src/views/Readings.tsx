// Readings: pick an organization and registers, a period and a resolution (as stored, 15 min,
// hour, day) or hourly averages; plot them together (overlaying a virtual register with its
// sources, a baseline with its actuals); switch to a table; download a CSV of what is shown.
import { useMemo, useState } from 'preact/hooks';
import { call, callText } from '../api/client.ts';
import type { Session } from '../api/session.ts';
import type { Meter, Register, RegisterReadings } from '../api/types.ts';
import { setParams } from '../app/route.ts';
import { useAsync } from '../app/useAsync.ts';
import { TimeSeriesChart, type SeriesStyle, type ViewWindow } from '../chart/TimeSeriesChart.tsx';
import { DataTable } from '../components/DataTable.tsx';
import { ErrorBox, Loading } from '../components/ErrorBox.tsx';
import { OrgPicker, chosenOrganization } from '../components/OrgPicker.tsx';
import { DayRangeInputs } from '../components/ParamInput.tsx';
import { kindOf, RegisterPicker } from '../components/RegisterPicker.tsx';
import { toCsv } from '../data/csv.ts';
import { alignReadings, visibleRows, type Aligned } from '../data/series.ts';
import { DAY_MS, isoDay, periodOf } from '../data/time.ts';
import { registerLabel } from '../data/units.ts';
import { PALETTE } from '../chart/palette.ts';

export const RESOLUTIONS = [
  { value: '0', label: 'As stored' },
  { value: '900', label: '15 minutes' },
  { value: '3600', label: 'Hour' },
  { value: '86400', label: 'Day (register’s local days)' },
  { value: 'avg', label: 'Hourly averages' },
] as const;

export function useMeters(org: number | undefined) {
  return useAsync(
    org === undefined
      ? undefined
      : async () => {
          const list = await call<{ meters: Meter[]; registers: Register[] }>('/api/meter', { query: { organizationId: org } });
          performance.clearMarks(METERS_MARK);
          performance.mark(METERS_MARK);
          return list;
        },
    [org],
  );
}

const READINGS_MARK = 'flex:readings-response';
const METERS_MARK = 'flex:meters-response';

/** The chart is drawn once both the readings and the registers are in: its draw time counts from
 * the later of the two responses. */
function lastResponseMark(): string {
  const at = (name: string) => performance.getEntriesByName(name).at(-1)?.startTime ?? -1;
  return at(METERS_MARK) > at(READINGS_MARK) ? METERS_MARK : READINGS_MARK;
}

export function selectedIds(params: URLSearchParams): number[] {
  return (params.get('r') ?? '')
    .split(',')
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0);
}

interface Loaded {
  aligned: Aligned;
  registerIds: number[];
}

/** Fetches the readings and aligns them; marks when the response arrived (draw timing). */
async function loadReadings(org: number, ids: number[], start: string, end: string, resolution: string): Promise<Loaded> {
  const average = resolution === 'avg';
  const text = await callText(average ? '/api/readings/average/hourly' : '/api/readings', {
    query: { organizationId: org, registerId: ids, start, end, ...(average ? {} : { resolution }) },
  });
  performance.clearMarks(READINGS_MARK);
  performance.mark(READINGS_MARK);
  const body = JSON.parse(text) as RegisterReadings[];
  const byId = new Map(body.map((r) => [r.registerId, r.readings]));
  return { aligned: alignReadings(ids.map((id) => byId.get(id) ?? [])), registerIds: ids };
}

function download(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function Readings({ session, params }: { session: Session; params: URLSearchParams }) {
  const org = chosenOrganization(session, params);
  const ids = selectedIds(params);
  const today = Date.now() - (Date.now() % DAY_MS);
  const from = params.get('from') ?? isoDay(today - 7 * DAY_MS);
  const to = params.get('to') ?? isoDay(today - DAY_MS);
  const resolution = params.get('res') ?? '0';
  const mode = params.get('view') === 'table' ? 'table' : 'chart';
  const period = periodOf(from, to);
  const meters = useMeters(org);
  const idKey = ids.join(',');
  const readings = useAsync(
    org !== undefined && ids.length > 0 && period ? () => loadReadings(org, ids, period.start, period.end, resolution) : undefined,
    [org, idKey, period?.start, period?.end, resolution],
  );
  const [view, setView] = useState<{ of: Loaded; window: ViewWindow } | undefined>();

  const registers = meters.value?.registers ?? [];
  const byId = useMemo(() => new Map(registers.map((r) => [r.id, r])), [registers]);
  // Drawn once the registers are known too, so the chart is built once with its final labels.
  const loaded = meters.value ? readings.value : undefined;
  const series: SeriesStyle[] = useMemo(
    () =>
      (loaded?.registerIds ?? []).map((id, i) => {
        const r = byId.get(id);
        return { label: r ? registerLabel(r) : `#${id}`, color: PALETTE[i % PALETTE.length]!, dashed: r ? kindOf(r) !== 'measured' : false };
      }),
    [loaded, byId],
  );
  const labels = series.map((s) => s.label);
  // The chart reports its window (zoom, hidden series); until it has, everything loaded is shown.
  const shownWindow = loaded && view?.of === loaded ? view.window : loaded ? { min: -Infinity, max: Infinity, shown: labels.map((_, i) => i) } : undefined;
  const rows = useMemo(
    () => (loaded && shownWindow ? visibleRows(loaded.aligned, shownWindow.min, shownWindow.max, shownWindow.shown) : []),
    [loaded, shownWindow?.min, shownWindow?.max, shownWindow?.shown.join(',')],
  );

  const csv = () => {
    if (!loaded || !shownWindow) return;
    const name = `readings-org${org}-${from}-${to}-${resolution === 'avg' ? 'hourly-average' : `res${resolution}`}.csv`;
    download(name, toCsv(loaded.aligned, labels, shownWindow.min, shownWindow.max, shownWindow.shown));
  };

  return (
    <section class="readings">
      <div class="controls">
        <OrgPicker session={session} value={org} />
        <DayRangeInputs from={from} to={to} testIds={['from', 'to']} />
        <label>
          Resolution
          <select value={resolution} onChange={(e) => setParams({ res: (e.currentTarget as HTMLSelectElement).value })} data-testid="resolution">
            {RESOLUTIONS.map((r) => (
              <option value={r.value}>{r.label}</option>
            ))}
          </select>
        </label>
        <span class="muted">All times UTC.</span>
      </div>
      {org === undefined ? <p class="notice">Choose an organization.</p> : null}
      {!period ? <p class="notice">The period is not valid: “To” must not be before “From”.</p> : null}
      <ErrorBox error={meters.error} what="Registers" />
      {meters.value ? <RegisterPicker meters={meters.value.meters} registers={registers} selected={ids} onChange={(next) => setParams({ r: next.join(',') })} /> : <Loading when={meters.loading} />}
      <Loading when={readings.loading} what="Loading readings…" />
      <ErrorBox error={readings.error} what="Readings" />
      {loaded && !readings.error ? (
        <>
          <div class="toolbar">
            <div class="tabs" role="tablist">
              <button type="button" role="tab" aria-selected={mode === 'chart'} onClick={() => setParams({ view: undefined })} data-testid="show-chart">
                Chart
              </button>
              <button type="button" role="tab" aria-selected={mode === 'table'} onClick={() => setParams({ view: 'table' })} data-testid="show-table">
                Table
              </button>
            </div>
            <button type="button" onClick={csv} data-testid="download-csv">
              Download CSV ({rows.length} rows)
            </button>
            <span class="muted">Drag to zoom · Shift+drag or wheel to pan/zoom · double-click to reset · click a legend entry to hide it</span>
          </div>
          {loaded.aligned.x.length === 0 ? <p class="notice" data-testid="no-readings">No readings in this period for the chosen registers.</p> : null}
          <div hidden={mode !== 'chart'}>
            <TimeSeriesChart aligned={loaded.aligned} series={series} responseMark={lastResponseMark()} onView={(w) => setView({ of: loaded, window: w })} />
          </div>
          {mode === 'table' ? (
            <DataTable
              testId="readings-table"
              header={['timestamp (UTC)', ...shownWindow!.shown.map((s) => labels[s]!)]}
              rowCount={rows.length}
              row={(k) => {
                const i = rows[k]!;
                return [new Date(loaded.aligned.x[i]! * 1000).toISOString(), ...shownWindow!.shown.map((s) => (typeof loaded.aligned.ys[s]![i] === 'number' ? String(loaded.aligned.ys[s]![i]) : ''))];
              }}
            />
          ) : null}
        </>
      ) : null}
    </section>
  );
}
