// Which organization's data to look at: a global administrator picks any organization (admin
// API); every other token has its own.
import { call } from '../api/client.ts';
import type { Session } from '../api/session.ts';
import type { Organization } from '../api/types.ts';
import { setParams } from '../app/route.ts';
import { useAsync } from '../app/useAsync.ts';
import { ErrorBox } from './ErrorBox.tsx';

/** The organization chosen in the URL, or the token's own. */
export function chosenOrganization(session: Session, params: URLSearchParams): number | undefined {
  const fromUrl = Number(params.get('org'));
  if (Number.isInteger(fromUrl) && fromUrl > 0) return fromUrl;
  return session.me.organizationId ?? undefined;
}

export function OrgPicker({ session, value }: { session: Session; value: number | undefined }) {
  const admin = session.me.globalAdmin;
  const orgs = useAsync(admin ? () => call<Organization[]>('/api/admin/organizations', { query: { limit: 10000 } }) : undefined, [admin]);
  if (!admin) return <span class="org">Organization {session.me.organizationId ?? '(none)'}</span>;
  return (
    <label class="org">
      Organization
      <select value={value === undefined ? '' : String(value)} onChange={(e) => setParams({ org: (e.currentTarget as HTMLSelectElement).value })} data-testid="org">
        <option value="">Choose…</option>
        {(orgs.value ?? []).map((o) => (
          <option value={String(o.id)}>
            {o.name} (#{o.id})
          </option>
        ))}
      </select>
      <ErrorBox error={orgs.error} />
    </label>
  );
}
