// Demand response, through the VTN API of the token's organization: programs with their events
// on a timeline (intervals and payload values), VENs and their resources, subscriptions with the
// delivery state of their webhook notifications (the admin API: global administrators), and the
// retry of a dead one; beside them, the MQTT notifications (OpenADR 3.1 notifier) and their state.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { allPages, call } from '../api/client.ts';
import type { Session } from '../api/session.ts';
import { useAsync } from '../app/useAsync.ts';
import { ErrorBox, Loading } from '../components/ErrorBox.tsx';
import { intervalsOf, payloadText, type VtnEvent } from '../data/eventTimeline.ts';
import { DAY_MS, formatInstant, isoDay, parseDay } from '../data/time.ts';
import { PALETTE } from '../chart/palette.ts';

const VTN = '/api/openadr/v1';

interface Program {
  id: string;
  programName: string;
  programLongName: string | null;
}
interface Resource {
  id: string;
  resourceName: string;
}
interface Ven {
  id: string;
  venName: string;
  clientID: string | null;
  resources: Resource[] | null;
}
interface Subscription {
  id: string;
  clientName: string;
  programID: string;
  objectOperations: { objects: string[]; operations: string[]; callbackUrl: string }[] | null;
}
interface Notification {
  id: string;
  subscriptionID: string;
  objectType: string;
  operation: string;
  objectID: string;
  state: 'pending' | 'delivered' | 'dead';
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: string;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
}

const STATES = ['pending', 'delivered', 'dead'] as const;
const NOTIFICATION_PAGE = 1000;

function Timeline({ programs, events, start, end, initial }: { programs: Program[]; events: VtnEvent[]; start: number; end: number; initial?: string }) {
  const [chosen, setChosen] = useState<string | undefined>(initial);
  const width = 1000;
  const lane = 44;
  const left = 160;
  const x = (t: number) => left + ((Math.min(Math.max(t, start), end) - start) / (end - start)) * (width - left - 10);
  const lanes = programs.filter((p) => events.some((e) => e.programID === p.id)).concat(programs.filter((p) => !events.some((e) => e.programID === p.id)));
  const days: number[] = [];
  for (let t = start; t <= end; t += DAY_MS) days.push(t);
  const step = Math.max(1, Math.ceil(days.length / 14));
  const selected = events.find((e) => e.id === chosen);
  return (
    <div class="timeline" data-testid="timeline">
      <svg viewBox={`0 0 ${width} ${30 + lanes.length * lane}`} width="100%" role="img" aria-label="Events on a timeline">
        {days.map((t, i) => (
          <g>
            <line x1={x(t)} x2={x(t)} y1={20} y2={30 + lanes.length * lane} class="grid" />
            {i % step === 0 ? (
              <text x={x(t) + 2} y={14} class="axis">
                {isoDay(t).slice(5)}
              </text>
            ) : null}
          </g>
        ))}
        {Date.now() > start && Date.now() < end ? <line x1={x(Date.now())} x2={x(Date.now())} y1={16} y2={30 + lanes.length * lane} class="now" /> : null}
        {lanes.map((p, row) => {
          const y = 26 + row * lane;
          return (
            <g data-program-id={p.id}>
              <text x={4} y={y + 22} class="lane-label">
                {p.programName.length > 22 ? `${p.programName.slice(0, 21)}…` : p.programName}
              </text>
              {events
                .filter((e) => e.programID === p.id)
                .map((e, k) => {
                  const color = PALETTE[k % PALETTE.length]!;
                  return (
                    <g class="event" data-event-id={e.id} data-testid="timeline-event" onClick={() => setChosen(e.id)}>
                      <title>{`${e.eventName ?? e.id} (priority ${e.priority ?? 'none'})`}</title>
                      {intervalsOf(e).map((iv) => {
                        const x0 = x(iv.start);
                        const x1 = iv.end === null ? x(end) : x(iv.end);
                        if (iv.end !== null && (iv.end <= start || iv.start >= end)) return null;
                        return (
                          <g>
                            <rect x={x0} y={y + 4} width={Math.max(2, x1 - x0 - 1)} height={lane - 10} fill={color} fill-opacity={iv.end === null ? 0.35 : 0.75} data-interval-id={iv.id}>
                              <title>{`${e.eventName ?? e.id} · interval ${iv.id}: ${new Date(iv.start).toISOString()} → ${iv.end === null ? 'open-ended' : new Date(iv.end).toISOString()} · ${payloadText(iv.payloads)}`}</title>
                            </rect>
                            {x1 - x0 > 40 ? (
                              <text x={x0 + 3} y={y + 22} class="payload">
                                {payloadText(iv.payloads).slice(0, Math.floor((x1 - x0) / 6))}
                              </text>
                            ) : null}
                          </g>
                        );
                      })}
                    </g>
                  );
                })}
            </g>
          );
        })}
      </svg>
      {lanes.length === 0 ? <p class="notice">No programs.</p> : null}
      {selected ? (
        <div class="event-detail" data-testid="event-detail">
          <h3>
            {selected.eventName ?? selected.id} <span class="muted">event {selected.id} · priority {selected.priority ?? 'none'}</span>
          </h3>
          {selected.targets && selected.targets.length > 0 ? (
            <p class="muted" data-testid="event-targets">
              for {selected.targets.map((t) => `${t.type} ${t.values.join(', ')}`).join(' · ')}
            </p>
          ) : null}
          <table>
            <thead>
              <tr>
                <th>interval</th>
                <th>start (UTC)</th>
                <th>end (UTC)</th>
                <th>payloads</th>
              </tr>
            </thead>
            <tbody>
              {intervalsOf(selected).map((iv) => (
                <tr>
                  <td>{iv.id}</td>
                  <td>{formatInstant(new Date(iv.start).toISOString())}</td>
                  <td>{iv.end === null ? 'open-ended' : formatInstant(new Date(iv.end).toISOString())}</td>
                  <td>{payloadText(iv.payloads)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </div>
  );
}

interface MqttMessage {
  id: number;
  objectType: string;
  operation: string;
  objectID: string;
  topicCount: number;
  state: 'pending' | 'published';
  attempts: number;
  lastError: string | null;
  createdAt: string;
  publishedAt: string | null;
}

const MQTT_SHOWN = 10;

async function mqttMessagesOf(organizationId: number): Promise<{ pending: MqttMessage[]; published: MqttMessage[] }> {
  const [pending, published] = await Promise.all(
    (['pending', 'published'] as const).map((state) => call<MqttMessage[]>('/api/admin/mqtt-messages', { query: { organizationId, state, limit: NOTIFICATION_PAGE } })),
  );
  return { pending: pending!, published: published! };
}

/** MQTT delivery state beside the webhooks': messages wait in the outbox until the broker acknowledged them. */
function MqttMessages({ session }: { session: Session }) {
  const org = session.me.organizationId;
  const admin = session.me.globalAdmin;
  const messages = useAsync(admin && org !== null ? () => mqttMessagesOf(org) : undefined, [admin, org]);
  const pending = messages.value?.pending ?? [];
  const published = messages.value?.published ?? [];
  useEffect(() => {
    if (pending.length === 0) return;
    const timer = setTimeout(messages.reload, 2000);
    return () => clearTimeout(timer);
  }, [messages.value]);
  if (!admin) return <p class="muted">MQTT delivery states are shown to global administrators (GET /api/admin/mqtt-messages).</p>;
  const shown = [...pending, ...published.slice(-MQTT_SHOWN)].sort((a, b) => b.id - a.id).slice(0, MQTT_SHOWN + pending.length);
  const count = (list: MqttMessage[]) => (list.length >= NOTIFICATION_PAGE ? `${list.length}+` : String(list.length));
  return (
    <div data-testid="mqtt-messages" data-pending={count(pending)} data-published={count(published)}>
      <ErrorBox error={messages.error} what="MQTT notifications" />
      <p>
        {count(pending)} pending (waiting for the broker), {count(published)} published.{' '}
        <button type="button" onClick={messages.reload}>
          Refresh MQTT states
        </button>
      </p>
      <table>
        <thead>
          <tr>
            <th>#</th>
            <th>object</th>
            <th>topics</th>
            <th>state</th>
            <th>attempts</th>
            <th>when</th>
            <th>last error</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((m) => (
            <tr data-mqtt-id={m.id} data-state={m.state}>
              <td>{m.id}</td>
              <td>
                {m.objectType} {m.operation} <span class="muted">{m.objectID}</span>
              </td>
              <td>{m.topicCount}</td>
              <td>{m.state}</td>
              <td>{m.attempts}</td>
              <td>{formatInstant(m.publishedAt ?? m.createdAt)}</td>
              <td>{m.lastError ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

async function notificationsOf(organizationId: number): Promise<Notification[]> {
  const out: Notification[] = [];
  for (const state of STATES) out.push(...(await call<Notification[]>('/api/admin/notifications', { query: { organizationId, state, limit: NOTIFICATION_PAGE } })));
  return out;
}

function Subscriptions({ session, subscriptions, programs }: { session: Session; subscriptions: Subscription[]; programs: Program[] }) {
  const org = session.me.organizationId;
  const admin = session.me.globalAdmin;
  const notifications = useAsync(admin && org !== null ? () => notificationsOf(org) : undefined, [admin, org]);
  const [retryError, setRetryError] = useState<Error | undefined>();
  const pending = (notifications.value ?? []).some((n) => n.state === 'pending');
  useEffect(() => {
    if (!pending) return;
    const timer = setTimeout(notifications.reload, 2000);
    return () => clearTimeout(timer);
  }, [notifications.value]);
  const bySubscription = useMemo(() => {
    const map = new Map<string, Notification[]>();
    for (const n of notifications.value ?? []) map.set(n.subscriptionID, [...(map.get(n.subscriptionID) ?? []), n]);
    return map;
  }, [notifications.value]);
  const programName = (id: string) => programs.find((p) => p.id === id)?.programName ?? id;
  const retry = async (id: string) => {
    setRetryError(undefined);
    try {
      await call(`/api/admin/notifications/${encodeURIComponent(id)}/retry`, { method: 'POST' });
      notifications.reload();
    } catch (err) {
      setRetryError(err as Error);
    }
  };
  const count = (list: Notification[], state: string) => {
    const n = list.filter((x) => x.state === state).length;
    return n >= NOTIFICATION_PAGE ? `${n}+` : String(n);
  };
  return (
    <div data-testid="subscriptions">
      {!admin ? <p class="muted">Delivery states of notifications are shown to global administrators (GET /api/admin/notifications).</p> : null}
      <ErrorBox error={notifications.error} what="Notifications" />
      <ErrorBox error={retryError} what="Retry" />
      <table>
        <thead>
          <tr>
            <th>subscription</th>
            <th>program</th>
            <th>objects → callback</th>
            {admin ? (
              <>
                <th>pending</th>
                <th>delivered</th>
                <th>dead</th>
              </>
            ) : null}
          </tr>
        </thead>
        <tbody>
          {subscriptions.map((s) => {
            const list = bySubscription.get(s.id) ?? [];
            const dead = list.filter((n) => n.state === 'dead');
            return (
              <>
                <tr data-subscription-id={s.id}>
                  <td>
                    {s.clientName} <span class="muted">{s.id}</span>
                  </td>
                  <td>{programName(s.programID)}</td>
                  <td>
                    {(s.objectOperations ?? []).map((o) => (
                      <div>
                        {o.operations.join('/')} {o.objects.join(', ')} → <code>{o.callbackUrl}</code>
                      </div>
                    ))}
                  </td>
                  {admin ? (
                    <>
                      <td class="state-pending-text">{count(list, 'pending')}</td>
                      <td class="state-delivered-text">{count(list, 'delivered')}</td>
                      <td class="state-dead-text">{count(list, 'dead')}</td>
                    </>
                  ) : null}
                </tr>
                {dead.map((n) => (
                  <tr class="dead" data-notification-id={n.id} data-state={n.state} data-testid="dead-notification">
                    <td colSpan={3}>
                      Dead: {n.operation} {n.objectType} {n.objectID} · {n.attempts} attempts · last {n.lastStatus ?? 'no answer'}
                      {n.lastError ? ` (${n.lastError})` : ''} · created {formatInstant(n.createdAt)}
                    </td>
                    <td colSpan={3}>
                      <button type="button" onClick={() => retry(n.id)} data-testid="retry">
                        Retry
                      </button>
                    </td>
                  </tr>
                ))}
              </>
            );
          })}
        </tbody>
      </table>
      {subscriptions.length === 0 ? <p class="notice">No subscriptions.</p> : null}
      {admin ? (
        <div class="notification-states" data-testid="notification-states" data-pending={count(notifications.value ?? [], 'pending')} data-delivered={count(notifications.value ?? [], 'delivered')} data-dead={count(notifications.value ?? [], 'dead')}>
          <button type="button" onClick={notifications.reload}>
            Refresh delivery states
          </button>
        </div>
      ) : null}
    </div>
  );
}

/** `event` (with `from`, `to`) in the route opens the view on that event (the market view links here). */
export function DemandResponse({ session, params }: { session: Session; params?: URLSearchParams }) {
  const today = Date.now() - (Date.now() % DAY_MS);
  const [from, setFrom] = useState(params?.get('from') ?? isoDay(today - 3 * DAY_MS));
  const [to, setTo] = useState(params?.get('to') ?? isoDay(today + 7 * DAY_MS));
  const linked = params?.get('event') ?? undefined;
  const start = parseDay(from) ?? today - 3 * DAY_MS;
  const end = (parseDay(to) ?? today + 7 * DAY_MS) + DAY_MS;
  const data = useAsync(
    () =>
      Promise.all([
        allPages<Program>(`${VTN}/programs`),
        allPages<VtnEvent>(`${VTN}/events`, { 'x-start': new Date(start).toISOString(), 'x-end': new Date(end).toISOString() }),
        allPages<Ven>(`${VTN}/vens`),
        allPages<Subscription>(`${VTN}/subscriptions`),
      ]),
    [start, end],
  );
  const [programs, events, vens, subscriptions] = data.value ?? [[], [], [], []];
  return (
    <section class="demand-response">
      <div class="controls">
        <span>VTN of organization {session.me.organizationId ?? '(none)'}</span>
        <label>
          From
          <input type="date" value={from} onChange={(e) => setFrom((e.currentTarget as HTMLInputElement).value)} data-testid="dr-from" />
        </label>
        <label>
          To (inclusive)
          <input type="date" value={to} onChange={(e) => setTo((e.currentTarget as HTMLInputElement).value)} data-testid="dr-to" />
        </label>
        <button type="button" onClick={data.reload} data-testid="dr-refresh">
          Refresh
        </button>
      </div>
      <Loading when={data.loading} />
      <ErrorBox error={data.error} what="VTN" />
      {data.value ? (
        <>
          <h2>Programs and events</h2>
          <Timeline programs={programs} events={events} start={start} end={end} initial={linked} />
          <h2>VENs and resources</h2>
          <table data-testid="vens">
            <thead>
              <tr>
                <th>VEN</th>
                <th>client</th>
                <th>resources</th>
              </tr>
            </thead>
            <tbody>
              {vens.map((v) => (
                <tr data-ven-id={v.id}>
                  <td>
                    {v.venName} <span class="muted">{v.id}</span>
                  </td>
                  <td>{v.clientID ?? '—'}</td>
                  <td>{(v.resources ?? []).map((r) => r.resourceName).join(', ') || '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {vens.length === 0 ? <p class="notice">No VENs.</p> : null}
          <h2>Subscriptions and notifications</h2>
          <Subscriptions session={session} subscriptions={subscriptions} programs={programs} />
          <h2>MQTT notifications</h2>
          <MqttMessages session={session} />
        </>
      ) : null}
    </section>
  );
}
