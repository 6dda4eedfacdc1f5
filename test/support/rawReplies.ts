// `raw` replies (a body the handler encoded itself: stored VTN documents, readings assembled from
// the time-series store, the settlement specification) skip the response serializer, so nothing
// at run time holds them to the route's response schema. This hook wraps every route handler of a
// running app and checks each raw JSON reply against the schema the route publishes for that
// status (Ajv, the same formats as requests), collecting what it saw and what did not match.
// startTestApp installs it in every integration test's app and fails the test file's close() on
// a mismatch; test/integration/rawReplies.test.ts drives every raw route on each time-series
// backend. Bodies above MAX_CHECKED_BYTES (the heavy read tests) are passed over, to keep the
// suite's time.
import type { ValidateFunction } from 'ajv';
import type { App } from '../../src/app.ts';
import type { ApiReply, JsonSchema } from '../../src/http/types.ts';
import { compile, createValidators } from '../../src/http/validation.ts';

/** Routes whose raw JSON reply has no schema on purpose, and what checks them instead. */
export const RAW_WITHOUT_SCHEMA: Readonly<Record<string, string>> = {
  'GET /api/openapi.json': 'the OpenAPI document itself: test/integration/openapiLint.test.ts lints it',
};

const MAX_CHECKED_BYTES = 8 * 1024 * 1024;

export interface RawReplyLog {
  /** `METHOD /path` → raw JSON replies checked, per status. */
  checked: Map<string, Set<number>>;
  failures: string[];
}

const isJson = (contentType: string | undefined) => contentType === undefined || /^application\/(?:[\w.+-]+\+)?json\b/.test(contentType);

export function checkRawReplies(app: App): RawReplyLog {
  const ajv = createValidators().body;
  const validators = new Map<JsonSchema, ValidateFunction>();
  const log: RawReplyLog = { checked: new Map(), failures: [] };
  for (const route of app.router.routes) {
    const def = route.def;
    const key = `${def.method} ${def.path}`;
    const handler = def.handler;
    def.handler = async (req) => {
      const reply: ApiReply = await handler(req);
      if (reply.raw === undefined || !isJson(reply.contentType) || key in RAW_WITHOUT_SCHEMA) return reply;
      // A raw reply may come as pieces (readings, one per register: compression.ts streams them).
      const raw = Array.isArray(reply.raw) ? Buffer.concat(reply.raw.map((piece) => (typeof piece === 'string' ? Buffer.from(piece) : piece))) : reply.raw;
      if (raw.length > MAX_CHECKED_BYTES) return reply;
      const schema = def.responses[reply.status]?.schema;
      if (!schema) {
        log.failures.push(`${key} → ${reply.status}: a raw JSON reply with no response schema for the status`);
        return reply;
      }
      let validate = validators.get(schema);
      if (!validate) validators.set(schema, (validate = compile(ajv, schema, `${key} response ${reply.status}`)));
      const body: unknown = JSON.parse(raw.toString());
      if (!validate(body)) log.failures.push(`${key} → ${reply.status}: ${ajv.errorsText(validate.errors)}`);
      if (!log.checked.has(key)) log.checked.set(key, new Set());
      log.checked.get(key)!.add(reply.status);
      return reply;
    };
  }
  return log;
}
