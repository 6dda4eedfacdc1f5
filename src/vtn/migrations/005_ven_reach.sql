-- What reaches a VEN, kept beside it (docs/vtn.md, "Who sees what").
--
-- 1. `reach_keys`: the target keys that make a program or event visible to a VEN: its own
--    targets, its resources' targets (OpenADR 3.1.0 grants targets "in their associated ven or
--    resource objects") and, when granted, VEN_NAME with its name. Recomputed by the writes of
--    VENs and resources in their transaction (src/vtn/visibility.ts, the one place that says how),
--    read by REST privacy, webhook matching and the MQTT per-VEN topics.
-- 2. `name_granted`: whether the name counts as a VEN_NAME target. A business-logic client's
--    write of the VEN grants it; a VEN client's create does not, and its rename ends it, so no
--    client obtains events addressed to a name it chose. VENs written before keep the grant
--    they had (it was implicit for every VEN).
ALTER TABLE vtn_vens ADD COLUMN name_granted boolean NOT NULL DEFAULT false;
ALTER TABLE vtn_vens ADD COLUMN reach_keys text[] NOT NULL DEFAULT '{}';
UPDATE vtn_vens SET name_granted = true;
UPDATE vtn_vens v SET reach_keys = ARRAY(
  SELECT DISTINCT k FROM (
    SELECT unnest(v.target_keys) AS k
    UNION ALL SELECT unnest(r.target_keys) FROM vtn_resources r WHERE r.organization_id = v.organization_id AND r.ven_id = v.id
    UNION ALL SELECT 'VEN_NAME' || chr(31) || v.ven_name
  ) keys ORDER BY k
);
CREATE INDEX vtn_vens_reach ON vtn_vens USING gin (reach_keys);

-- 3. Subscriptions as others may read them: without the webhook bearer tokens, which only the
--    subscription's own writer is shown. Served to other readers, notified and published.
ALTER TABLE vtn_subscriptions ADD COLUMN public_doc json;
UPDATE vtn_subscriptions s SET public_doc = (
  SELECT CASE WHEN jsonb_typeof(d->'objectOperations') = 'array'
    THEN jsonb_set(d, '{objectOperations}', (SELECT coalesce(jsonb_agg(o - 'bearerToken' ORDER BY n), '[]'::jsonb) FROM jsonb_array_elements(d->'objectOperations') WITH ORDINALITY AS e(o, n)))
    ELSE d END
  FROM (SELECT s.doc::jsonb AS d) x
)::json;
ALTER TABLE vtn_subscriptions ALTER COLUMN public_doc SET NOT NULL;

-- Notifications and MQTT messages written before carried the tokens: they lose them too.
UPDATE vtn_changes c SET object = (
  SELECT jsonb_set(d, '{objectOperations}', (SELECT coalesce(jsonb_agg(o - 'bearerToken' ORDER BY n), '[]'::jsonb) FROM jsonb_array_elements(d->'objectOperations') WITH ORDINALITY AS e(o, n)))
  FROM (SELECT c.object::jsonb AS d) x
)::json
WHERE c.object_type = 'SUBSCRIPTION' AND json_typeof(c.object->'objectOperations') = 'array';
UPDATE vtn_mqtt_messages m SET object = (
  SELECT jsonb_set(d, '{objectOperations}', (SELECT coalesce(jsonb_agg(o - 'bearerToken' ORDER BY n), '[]'::jsonb) FROM jsonb_array_elements(d->'objectOperations') WITH ORDINALITY AS e(o, n)))
  FROM (SELECT m.object::jsonb AS d) x
)::json
WHERE m.object_type = 'SUBSCRIPTION' AND json_typeof(m.object->'objectOperations') = 'array';
