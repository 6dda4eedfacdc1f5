-- Repairs VTN documents stored before issue 9 with the JSON escape \u0000 in a string. The json
-- type keeps such text verbatim, but every read of a value out of it (->, ->>, ::jsonb) fails
-- with 22P05, which made those objects unreadable, unchangeable and undeletable (500) and their
-- notifications undeliverable. Requests can no longer store it (src/http/router.ts refuses text
-- PostgreSQL cannot keep); this turns each stored \u0000 into \ufffd (U+FFFD, the replacement
-- character), the one change that makes the document readable again. An escape is rewritten only
-- when its backslash is not itself escaped (`\\u0000` is the six characters `\u0000`, left alone):
-- the lookbehind refuses a preceding backslash and the group keeps pairs of escaped backslashes.
-- (Unpaired surrogate escapes never reached a json column: its input check refuses them.)
CREATE FUNCTION pg_temp.flex_repair_nul(t text) RETURNS json LANGUAGE sql IMMUTABLE AS $$
  SELECT regexp_replace(t, '(?<!\\)((?:\\\\)*)\\u0000', '\1\\ufffd', 'g')::json
$$;

UPDATE vtn_programs SET doc = pg_temp.flex_repair_nul(doc::text) WHERE doc::text LIKE '%\\u0000%';
UPDATE vtn_events SET doc = pg_temp.flex_repair_nul(doc::text) WHERE doc::text LIKE '%\\u0000%';
UPDATE vtn_reports SET doc = pg_temp.flex_repair_nul(doc::text) WHERE doc::text LIKE '%\\u0000%';
UPDATE vtn_subscriptions SET doc = pg_temp.flex_repair_nul(doc::text) WHERE doc::text LIKE '%\\u0000%';
UPDATE vtn_vens SET doc = pg_temp.flex_repair_nul(doc::text) WHERE doc::text LIKE '%\\u0000%';
UPDATE vtn_resources SET doc = pg_temp.flex_repair_nul(doc::text) WHERE doc::text LIKE '%\\u0000%';
UPDATE vtn_changes SET object = pg_temp.flex_repair_nul(object::text) WHERE object::text LIKE '%\\u0000%';
UPDATE vtn_changes SET targets = pg_temp.flex_repair_nul(targets::text) WHERE targets::text LIKE '%\\u0000%';
DROP FUNCTION pg_temp.flex_repair_nul(text);
