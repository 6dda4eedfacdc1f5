// Text PostgreSQL cannot store. `text` columns refuse U+0000 (22021), `json`/`jsonb` refuse the
// `\u0000` escape (22P05, on any read of the value) and unpaired UTF-16 surrogates (22P02),
// while a JSON request body or a percent-encoded parameter can carry both. Such text is refused
// where requests are parsed (src/http/router.ts for parameters and JSON and form bodies; the
// reading-batch parser for POST /api/readings), with a 400 naming the field, so that nothing
// stored can become unreadable. Refused rather than normalised: a name or id silently changed
// would no longer match what the client holds. The rule lives here, with no dependencies, so the
// worker's parser and the server apply the same one (docs/architecture.md: one home per rule).

export const UNSTORABLE_TEXT = 'must not contain U+0000 (NUL) or unpaired UTF-16 surrogates (such text cannot be stored)';

/** U+0000, a high surrogate not followed by a low one, or a low one not preceded by a high one
 * (without the `u` flag a regular expression sees UTF-16 code units). */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether a string can be stored as PostgreSQL text and inside json. */
export function isStorableText(s: string): boolean {
  return !UNSTORABLE.test(s);
}
