// A refused call becomes an ApiError whose message says what happened (401, 403 and 429
// especially), for the view to show instead of an empty chart.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly detail?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Problem details (RFC 7807), OAuth errors (RFC 6749) or the plain-text 429 body → one sentence. */
export async function errorOf(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  let detail = text.trim();
  try {
    const body = JSON.parse(text) as { detail?: string; title?: string; error_description?: string; errors?: { path: string; message: string }[] };
    detail = body.error_description ?? body.detail ?? body.title ?? detail;
    if (body.errors?.length) detail += ` (${body.errors.map((e) => `${e.path} ${e.message}`).join('; ')})`;
  } catch {
    // not JSON: the text as it is (429 answers are plain text)
  }
  switch (res.status) {
    case 401:
      return new ApiError(401, 'Not signed in, or the token is invalid or has expired: sign in again.', detail);
    case 403:
      return new ApiError(403, `This token may not see this: ${detail || 'forbidden'}`, detail);
    case 429: {
      const wait = res.headers.get('Retry-After');
      return new ApiError(429, `Rate limit reached${wait ? `; try again in ${wait} s` : ''}. ${detail}`.trim(), detail);
    }
    default:
      return new ApiError(res.status, `The server answered ${res.status}: ${detail || res.statusText}`, detail);
  }
}
