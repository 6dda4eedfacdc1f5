// The shell: sign-in until there is a session, then the navigation and the current view.
import { useEffect, useState } from 'preact/hooks';
import { currentSession, onSessionChange, signOut, type Session } from '../api/session.ts';
import { Coverage } from '../views/Coverage.tsx';
import { DemandResponse } from '../views/DemandResponse.tsx';
import { Market } from '../views/Market.tsx';
import { Readings } from '../views/Readings.tsx';
import { SignIn } from '../views/SignIn.tsx';
import { hrefOf, useRoute, type ViewName } from './route.ts';

const TITLES: Record<ViewName, string> = {
  readings: 'Readings',
  coverage: 'Coverage',
  'demand-response': 'Demand response',
  market: 'Market',
};

function describe(session: Session): string {
  const me = session.me;
  const who = me.kind === 'user' ? `user ${me.subject.replace(/^user:/, '')}` : `${me.kind === 'vtn' ? 'VTN credential' : 'client'} ${me.subject}`;
  const org = me.organizationId === null ? 'no organization' : `organization ${me.organizationId}`;
  return `${who} · ${org}${me.globalAdmin ? ' · global administrator' : ''}`;
}

export function App() {
  const [session, setSession] = useState<Session | undefined>(currentSession);
  const [reason, setReason] = useState<string | undefined>();
  const route = useRoute();
  useEffect(
    () =>
      onSessionChange((s, why) => {
        setSession(s);
        setReason(why);
      }),
    [],
  );
  if (!session) return <SignIn reason={reason} />;
  const org = route.params.get('org') ?? undefined;
  return (
    <div class="shell">
      <header>
        <span class="brand">Flex</span>
        <nav>
          {(Object.keys(TITLES) as ViewName[]).map((view) => (
            <a href={hrefOf(view, { org })} aria-current={route.view === view ? 'page' : undefined} data-testid={`nav-${view}`}>
              {TITLES[view]}
            </a>
          ))}
          <a href="/docs" target="_blank" rel="noopener">
            API reference
          </a>
        </nav>
        <span class="identity" data-testid="identity">
          {describe(session)}
        </span>
        <button type="button" class="link" onClick={() => signOut()} data-testid="sign-out">
          Sign out
        </button>
      </header>
      <main data-view={route.view}>
        {route.view === 'readings' ? <Readings session={session} params={route.params} /> : null}
        {route.view === 'coverage' ? <Coverage session={session} params={route.params} /> : null}
        {route.view === 'demand-response' ? <DemandResponse session={session} params={route.params} /> : null}
        {route.view === 'market' ? <Market session={session} params={route.params} /> : null}
      </main>
    </div>
  );
}
