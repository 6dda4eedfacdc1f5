// Sign-in: a personal access token, or an OAuth client's id and secret exchanged at /oauth/token.
// The token is kept in sessionStorage only; the secret is never stored.
import { useState } from 'preact/hooks';
import { signInWithClient, signInWithToken } from '../api/session.ts';
import { ErrorBox } from '../components/ErrorBox.tsx';

export function SignIn({ reason }: { reason: string | undefined }) {
  const [method, setMethod] = useState<'pat' | 'client'>('pat');
  const [error, setError] = useState<Error | undefined>();
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const value = (name: string) => String(form.get(name) ?? '');
    setBusy(true);
    setError(undefined);
    try {
      if (method === 'pat') await signInWithToken(value('token'));
      else await signInWithClient(value('clientId'), value('clientSecret'), value('audience'));
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="sign-in">
      <h1>Flex console</h1>
      <p>Sign in to look at readings, coverage, demand response and the market. The console calls the public API with your token and shows exactly what it may see.</p>
      {reason === 'expired' ? <div class="notice">Your session ended (the token was refused or expired). Sign in again.</div> : null}
      <div class="tabs" role="tablist">
        <button type="button" role="tab" aria-selected={method === 'pat'} data-testid="method-pat" onClick={() => setMethod('pat')}>
          Personal access token
        </button>
        <button type="button" role="tab" aria-selected={method === 'client'} data-testid="method-client" onClick={() => setMethod('client')}>
          Client credentials
        </button>
      </div>
      <form onSubmit={submit} data-testid="sign-in-form">
        {method === 'pat' ? (
          <label>
            Token
            <input name="token" type="password" autocomplete="off" required placeholder="flex_pat_…" data-testid="token" />
          </label>
        ) : (
          <>
            <label>
              Client id
              <input name="clientId" autocomplete="username" required data-testid="client-id" />
            </label>
            <label>
              Client secret
              <input name="clientSecret" type="password" autocomplete="current-password" required data-testid="client-secret" />
            </label>
            <label>
              Audience
              <input name="audience" required defaultValue="flex-api" data-testid="audience" />
            </label>
          </>
        )}
        <button type="submit" disabled={busy} data-testid="sign-in">
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <ErrorBox error={error} />
      <p class="muted">
        The token stays in this tab’s session storage and is forgotten when the tab closes. API reference: <a href="/docs">/docs</a>.
      </p>
    </main>
  );
}
