// A refused or failed call, said plainly (never an empty chart in its place).
import { ApiError } from '../api/errors.ts';

export function ErrorBox({ error, what }: { error: Error | undefined; what?: string }) {
  if (!error) return null;
  const status = error instanceof ApiError ? error.status : undefined;
  return (
    <div class="error" role="alert" data-status={status ?? ''}>
      {what ? <strong>{what}: </strong> : null}
      {error.message}
    </div>
  );
}

export function Loading({ when, what = 'Loading…' }: { when: boolean; what?: string }) {
  return when ? (
    <div class="loading" aria-busy="true">
      {what}
    </div>
  ) : null;
}
