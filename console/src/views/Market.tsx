// The market of an organization over a period: its flexibility orders; its flexibility and
// availability transactions with their delivery-validation status, their dispatch to the
// resource's VEN (linking to the event in the demand-response view), their delivery against the
// baseline and their settlement line's agreement; settlement figures per month (or per day for
// periods up to a month); and the transactions affecting a substation.
import { useState } from 'preact/hooks';
import { call } from '../api/client.ts';
import type { Session } from '../api/session.ts';
import { useAsync } from '../app/useAsync.ts';
import { ErrorBox, Loading } from '../components/ErrorBox.tsx';
import { OrgPicker, chosenOrganization } from '../components/OrgPicker.tsx';
import { DayRangeInputs } from '../components/ParamInput.tsx';
import { DAY_MS, formatInstant, isoDay, periodOf } from '../data/time.ts';
import { codeLabel, DELIVERY_STATUSES, PRODUCT_TYPES } from '../data/units.ts';
import { hrefOf } from '../app/route.ts';

interface FlexibilityOrder {
  id: number;
  start: string;
  end: string;
  expiresAt: string;
  productType: number;
  unitPrice: number;
  minQuantity: number;
  maxQuantity: number;
  remainingQuantity: number;
  organizationId: number;
  marketZoneId?: number;
  resourceId: number | null;
}
interface Transaction {
  id: number;
  start: string;
  end: string;
  productType: number;
  quantity: number;
  resourceId: number;
  organizationId: number;
  counterpartOrganizationId: number;
  unitPrice?: number;
  availabilityPrice?: number;
  deliveryValidationStatus: number;
  deliveryPercentage: number | null;
  deliveredQuantity: number | null;
  remunerationPercentage: number | null;
  /** Flexibility: the baseline (reference) and the measured energy over the period, kWh. */
  referenceReadingValue?: number | null;
  validationReadingValue?: number | null;
  /** Flexibility: where the measured energy came from (meter data, the VEN's usage reports). */
  validationInputs?: { actual: { registerId: number; source: 'meter' | 'ven' | 'meter and ven' | null } } | null;
  /** Flexibility: how the transaction reached the resource's VEN (docs/flexibility-loop.md). */
  dispatch?: { eventID: string | null; state: 'pending' | 'sent' | 'none'; reason: string | null } | null;
}
interface Line {
  flexibilityTransactionId?: number;
  availabilityTransactionId?: number;
  totalRemuneration: number;
  /** unanswered, accepted, disputed or resolved (docs/products.md, "Settlement agreed"). */
  agreementState?: string;
  agreedRemuneration?: number | null;
}
interface Summary {
  totalRemunerationSum: number;
  transactions: Line[];
}
/** Settlement lines by `flexibility:<id>` / `availability:<id>`. */
type Lines = Map<string, Line>;
interface Specification {
  counterParts: { organizationId: number; flexibilitySoldSummary: Summary; flexibilityBoughtSummary: Summary; availabilitySoldSummary: Summary; availabilityBoughtSummary: Summary }[];
}
interface ImpactItem {
  flexibilityTransactionId: number;
  start: string;
  end: string;
  quantity: number;
  impact: number;
  quantityAfterImpact: number;
  deliveryValidationStatus: number;
}

const num = (n: number | null | undefined, digits = 2) => (n === null || n === undefined ? '—' : n.toLocaleString('en-US', { maximumFractionDigits: digits }));
const money = (n: number) => n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/** Settlement periods: calendar months, or days when the whole period is a month or less. */
function settlementPeriods(start: number, end: number): { label: string; start: number; end: number }[] {
  const out: { label: string; start: number; end: number }[] = [];
  if (end - start <= 31 * DAY_MS) {
    for (let t = start; t < end; t += DAY_MS) out.push({ label: isoDay(t), start: t, end: Math.min(end, t + DAY_MS) });
    return out;
  }
  let t = start;
  while (t < end) {
    const d = new Date(t);
    const next = Math.min(end, Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
    out.push({ label: isoDay(t).slice(0, 7), start: t, end: next });
    t = next;
  }
  return out;
}

async function settlement(org: number, start: number, end: number) {
  const rows = [];
  const lines: Lines = new Map();
  for (const p of settlementPeriods(start, end)) {
    const spec = await call<Specification>('/api/product/settlement/specification', { query: { organizationId: org, start: new Date(p.start).toISOString(), end: new Date(p.end).toISOString() } });
    const sum = (k: 'flexibilitySoldSummary' | 'flexibilityBoughtSummary' | 'availabilitySoldSummary' | 'availabilityBoughtSummary') => spec.counterParts.reduce((s, c) => s + c[k].totalRemunerationSum, 0);
    const count = spec.counterParts.reduce((s, c) => s + c.flexibilitySoldSummary.transactions.length + c.flexibilityBoughtSummary.transactions.length + c.availabilitySoldSummary.transactions.length + c.availabilityBoughtSummary.transactions.length, 0);
    for (const c of spec.counterParts) {
      for (const k of ['flexibilitySoldSummary', 'flexibilityBoughtSummary', 'availabilitySoldSummary', 'availabilityBoughtSummary'] as const) {
        for (const l of c[k].transactions) lines.set(l.flexibilityTransactionId !== undefined ? `flexibility:${l.flexibilityTransactionId}` : `availability:${l.availabilityTransactionId}`, l);
      }
    }
    rows.push({ ...p, flexSold: sum('flexibilitySoldSummary'), flexBought: sum('flexibilityBoughtSummary'), availSold: sum('availabilitySoldSummary'), availBought: sum('availabilityBoughtSummary'), count });
  }
  return { rows, lines };
}

/** A transaction's settlement line: its remuneration and whether the parties agreed on it. */
function Agreement({ line }: { line: Line | undefined }) {
  if (!line) return <span class="muted">—</span>;
  const agreed = line.agreedRemuneration !== null && line.agreedRemuneration !== undefined && line.agreedRemuneration !== line.totalRemuneration;
  return (
    <span class={`agreement-${line.agreementState ?? 'unanswered'}`} data-agreement={line.agreementState ?? 'unanswered'}>
      {money(line.totalRemuneration)} {line.agreementState ?? 'unanswered'}
      {agreed ? <span class="muted small"> (agreed {money(line.agreedRemuneration!)})</span> : null}
    </span>
  );
}

/** The dispatch of a flexibility transaction: its state, and its event in the demand-response view. */
function Dispatch({ t, org }: { t: Transaction; org: number | undefined }) {
  const d = t.dispatch;
  if (!d) return <span class="muted">—</span>;
  const day = isoDay(Date.parse(t.start) - (Date.parse(t.start) % DAY_MS));
  return (
    <span class={`dispatch-${d.state}`} data-dispatch={d.state} title={d.reason ?? undefined}>
      {d.state}
      {d.eventID ? (
        <>
          {' '}
          <a href={hrefOf('demand-response', { org: org === undefined ? undefined : String(org), event: d.eventID, from: day, to: isoDay(Date.parse(t.end) - 1) })} data-testid="dispatch-event">
            event
          </a>
        </>
      ) : null}
      {d.reason ? <div class="muted small">{d.reason}</div> : null}
    </span>
  );
}

function TransactionRows({ list, kind, org, lines }: { list: Transaction[]; kind: 'flexibility' | 'availability'; org: number | undefined; lines: Lines | undefined }) {
  return (
    <>
      {list.map((t) => (
        <tr data-transaction-id={t.id} data-kind={kind} data-validation={t.deliveryValidationStatus}>
          <td>
            {kind} #{t.id}
          </td>
          <td>{codeLabel(PRODUCT_TYPES, t.productType)}</td>
          <td>
            {formatInstant(t.start)} → {formatInstant(t.end)}
          </td>
          <td>{t.resourceId}</td>
          <td>{t.organizationId === t.counterpartOrganizationId ? '—' : `org ${t.counterpartOrganizationId}`}</td>
          <td class="num">{num(t.quantity)}</td>
          <td class="num">{num(kind === 'flexibility' ? t.unitPrice : t.availabilityPrice, 4)}</td>
          <td>{kind === 'flexibility' ? <Dispatch t={t} org={org} /> : <span class="muted">—</span>}</td>
          <td class={`validation-${t.deliveryValidationStatus}`}>{codeLabel(DELIVERY_STATUSES, t.deliveryValidationStatus)}</td>
          <td class="num" data-testid="baseline">{kind === 'flexibility' ? num(t.referenceReadingValue) : '—'}</td>
          <td class="num" data-testid="measured" data-source={t.validationInputs?.actual.source ?? undefined}>
            {kind === 'flexibility' ? num(t.validationReadingValue) : '—'}
            {t.validationInputs?.actual.source && t.validationInputs.actual.source !== 'meter' ? <span class="muted small"> ({t.validationInputs.actual.source === 'ven' ? 'VEN' : 'meter and VEN'})</span> : null}
          </td>
          <td class="num">{num(t.deliveredQuantity)}</td>
          <td class="num">{t.deliveryPercentage === null ? '—' : `${num(t.deliveryPercentage)}%`}</td>
          <td data-testid="settlement-line">
            <Agreement line={lines?.get(`${kind}:${t.id}`)} />
          </td>
        </tr>
      ))}
    </>
  );
}

function SubstationImpact({ session, org, start, end }: { session: Session; org: number; start: string; end: string }) {
  const [substation, setSubstation] = useState('');
  const substations = useAsync(session.me.globalAdmin ? () => call<{ id: number; name: string; marketZoneId: number }[]>('/api/admin/substations', { query: { limit: 10000 } }) : undefined, [session.me.globalAdmin]);
  const id = Number(substation);
  const impact = useAsync(
    Number.isInteger(id) && id > 0 ? () => call<ImpactItem[]>(`/api/product/transaction/flexibility/affecting/substation/${id}`, { query: { organizationId: org, start, end } }) : undefined,
    [id, org, start, end],
  );
  const items = impact.value ?? [];
  return (
    <div data-testid="substation-impact">
      <label>
        Substation
        {substations.value ? (
          <select value={substation} onChange={(e) => setSubstation((e.currentTarget as HTMLSelectElement).value)}>
            <option value="">Choose…</option>
            {substations.value.map((s) => (
              <option value={String(s.id)}>
                {s.name} (#{s.id}, zone {s.marketZoneId})
              </option>
            ))}
          </select>
        ) : (
          <input type="number" min={1} placeholder="substation id" value={substation} onInput={(e) => setSubstation((e.currentTarget as HTMLInputElement).value)} />
        )}
      </label>
      <Loading when={impact.loading} />
      <ErrorBox error={impact.error ?? substations.error} what="Substation impact" />
      {impact.value ? (
        <table>
          <thead>
            <tr>
              <th>transaction</th>
              <th>period (UTC)</th>
              <th>quantity</th>
              <th>impact factor</th>
              <th>quantity after impact</th>
              <th>validation</th>
            </tr>
          </thead>
          <tbody>
            {items.map((i) => (
              <tr>
                <td>#{i.flexibilityTransactionId}</td>
                <td>
                  {formatInstant(i.start)} → {formatInstant(i.end)}
                </td>
                <td class="num">{num(i.quantity)}</td>
                <td class="num">{num(i.impact, 4)}</td>
                <td class="num">{num(i.quantityAfterImpact)}</td>
                <td>{codeLabel(DELIVERY_STATUSES, i.deliveryValidationStatus)}</td>
              </tr>
            ))}
            <tr class="total">
              <td colSpan={2}>Total ({items.length})</td>
              <td class="num">{num(items.reduce((s, i) => s + i.quantity, 0))}</td>
              <td />
              <td class="num">{num(items.reduce((s, i) => s + i.quantityAfterImpact, 0))}</td>
              <td />
            </tr>
          </tbody>
        </table>
      ) : null}
    </div>
  );
}

export function Market({ session, params }: { session: Session; params: URLSearchParams }) {
  const org = chosenOrganization(session, params);
  const today = Date.now() - (Date.now() % DAY_MS);
  const from = params.get('from') ?? isoDay(today - 30 * DAY_MS);
  const to = params.get('to') ?? isoDay(today + 30 * DAY_MS);
  const period = periodOf(from, to);
  const ready = org !== undefined && period !== undefined;
  const q = ready ? { organizationId: org, start: period.start, end: period.end } : undefined;
  const orders = useAsync(q ? () => call<FlexibilityOrder[]>('/api/product/order/flexibility', { query: q }) : undefined, [org, period?.start, period?.end]);
  const transactions = useAsync(
    q
      ? () =>
          Promise.all([
            call<{ flexibilityTransactions: Transaction[]; otherFlexibilityTransactionsWithImpact: Transaction[] }>('/api/product/transaction/flexibility', { query: q }),
            call<Transaction[]>('/api/product/transaction/availability', { query: q }),
          ])
      : undefined,
    [org, period?.start, period?.end],
  );
  const figures = useAsync(ready ? () => settlement(org, Date.parse(period.start), Date.parse(period.end)) : undefined, [org, period?.start, period?.end]);

  return (
    <section class="market">
      <div class="controls">
        <OrgPicker session={session} value={org} />
        <DayRangeInputs from={from} to={to} testIds={['market-from', 'market-to']} />
      </div>
      {org === undefined ? <p class="notice">Choose an organization.</p> : null}
      {!period ? <p class="notice">The period is not valid.</p> : null}

      <h2>Flexibility orders</h2>
      <Loading when={orders.loading} />
      <ErrorBox error={orders.error} what="Orders" />
      {orders.value ? (
        <table data-testid="orders">
          <thead>
            <tr>
              <th>order</th>
              <th>product</th>
              <th>period (UTC)</th>
              <th>expires</th>
              <th>unit price</th>
              <th>quantity (min–max)</th>
              <th>remaining</th>
              <th>by</th>
            </tr>
          </thead>
          <tbody>
            {orders.value.map((o) => (
              <tr data-order-id={o.id}>
                <td>#{o.id}</td>
                <td>{codeLabel(PRODUCT_TYPES, o.productType)}</td>
                <td>
                  {formatInstant(o.start)} → {formatInstant(o.end)}
                </td>
                <td>{formatInstant(o.expiresAt)}</td>
                <td class="num">{num(o.unitPrice, 4)}</td>
                <td class="num">
                  {num(o.minQuantity)}–{num(o.maxQuantity)}
                </td>
                <td class="num">{num(o.remainingQuantity)}</td>
                <td>org {o.organizationId}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {orders.value?.length === 0 ? <p class="notice">No flexibility orders in this period.</p> : null}

      <h2>Transactions</h2>
      <Loading when={transactions.loading} />
      <ErrorBox error={transactions.error} what="Transactions" />
      {transactions.value ? (
        <table data-testid="transactions">
          <thead>
            <tr>
              <th>transaction</th>
              <th>product</th>
              <th>period (UTC)</th>
              <th>resource</th>
              <th>counterpart</th>
              <th>quantity</th>
              <th>price</th>
              <th>dispatch to the VEN</th>
              <th>delivery validation</th>
              <th>baseline (kWh)</th>
              <th>measured (kWh)</th>
              <th>delivered</th>
              <th>delivered %</th>
              <th>settlement line</th>
            </tr>
          </thead>
          <tbody>
            <TransactionRows list={transactions.value[0].flexibilityTransactions} kind="flexibility" org={org} lines={figures.value?.lines} />
            <TransactionRows list={transactions.value[1]} kind="availability" org={org} lines={figures.value?.lines} />
          </tbody>
        </table>
      ) : null}
      <p class="muted">
        Quantities in kWh (flexibility) and kW (availability). Baseline and measured: the energy of the resource’s reference and actual registers over the period (marked VEN where
        the resource’s VEN reported it); delivered = their difference in the product’s direction, less earlier transactions’ share (docs/products.md).
      </p>
      {transactions.value && transactions.value[0].otherFlexibilityTransactionsWithImpact.length > 0 ? (
        <p class="muted">{transactions.value[0].otherFlexibilityTransactionsWithImpact.length} other flexibility transactions affect this organization’s grid.</p>
      ) : null}

      <h2>Settlement</h2>
      <Loading when={figures.loading} what="Computing settlement figures…" />
      <ErrorBox error={figures.error} what="Settlement" />
      {figures.value ? (
        <table data-testid="settlement">
          <thead>
            <tr>
              <th>period</th>
              <th>transactions</th>
              <th>flexibility sold</th>
              <th>flexibility bought</th>
              <th>availability sold</th>
              <th>availability bought</th>
              <th>net</th>
            </tr>
          </thead>
          <tbody>
            {figures.value.rows.map((r) => (
              <tr data-period={r.label}>
                <td>{r.label}</td>
                <td class="num">{r.count}</td>
                <td class="num">{money(r.flexSold)}</td>
                <td class="num">{money(r.flexBought)}</td>
                <td class="num">{money(r.availSold)}</td>
                <td class="num">{money(r.availBought)}</td>
                <td class="num">{money(r.flexSold + r.availSold - r.flexBought - r.availBought)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <p class="muted">Remuneration by transaction start (GET /api/product/settlement/specification); not yet validated transactions count 0.</p>

      <h2>Substation impact</h2>
      {ready ? <SubstationImpact session={session} org={org} start={period.start} end={period.end} /> : null}
    </section>
  );
}

