-- Settlement lines that can be reproduced (docs/products.md, "Versions and asOf").
--
-- Every state a transaction's settlement line has had is kept in settlement_line_versions with
-- the instant it was recorded and the instant it was superseded; the specification "as of" an
-- instant T is the versions recorded at or before T and not superseded at T. The versions are
-- written by triggers on the two transaction tables, whatever statement changes a row: creation,
-- validation, a settlement response, and any change or deletion added later.
--
-- Instants. A writer's instant is taken once per database transaction, at its first versioned
-- write, after it took the shared advisory lock 727274100 (held until it commits), rounded UP to
-- the millisecond. A reader asks settlement_read_instant() for the latest instant whose writers
-- have all committed: the earlier of now and (the start of the oldest transaction holding that
-- lock, less a microsecond), rounded DOWN to the millisecond. A later statement of the reader
-- (a fresh snapshot) then sees every version recorded at or before that instant, and no writer
-- can still record one there: asking again with the same asOf gives the same answer, byte for
-- byte. Readers never wait for writers, and writers never wait for readers.

-- The agreement of a settlement line (settlement responses, migration 005; docs/products.md):
--   agreement_state      0 unanswered, 1 accepted, 2 disputed (a dispute is open), 3 resolved
--   agreed_remuneration  the amount agreed on (accepted: the line's; resolved: the settled one)
--   dispute_id           the open or resolved dispute deciding the state
ALTER TABLE flexibility_transactions
  ADD COLUMN agreement_state smallint NOT NULL DEFAULT 0,
  ADD COLUMN agreed_remuneration numeric,
  ADD COLUMN dispute_id int;
ALTER TABLE availability_transactions
  ADD COLUMN agreement_state smallint NOT NULL DEFAULT 0,
  ADD COLUMN agreed_remuneration numeric,
  ADD COLUMN dispute_id int;

-- The lines are written into the versions now (the specification reads only those).
ALTER TABLE flexibility_transactions DROP COLUMN settlement_line;
ALTER TABLE availability_transactions DROP COLUMN settlement_line;

CREATE FUNCTION settlement_agreement_json(state smallint, agreed numeric, dispute int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT ',"agreementState":"' || (CASE state WHEN 1 THEN 'accepted' WHEN 2 THEN 'disputed' WHEN 3 THEN 'resolved' ELSE 'unanswered' END)
    || '","agreedRemuneration":' || coalesce(agreed::text, 'null') || ',"disputeId":' || coalesce(dispute::text, 'null')
$$;

-- A line's JSON text. remuneration_amount (migration 002) is round(quantity × price ×
-- remunerationPercentage / 100, 2) once validated, else 0 (also for a validated row without a
-- percentage, which only a hand-written row can be).
CREATE FUNCTION flexibility_settlement_line(t flexibility_transactions) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT '{"flexibilityTransactionId":' || t.id::text || ',"resourceId":' || t.resource_id::text
    || ',"deliveryPercentage":' || coalesce(t.delivery_percentage::text, 'null') || ',"remunerationPercentage":' || coalesce(t.remuneration_percentage::text, 'null')
    || ',"unitPrice":' || t.unit_price::text || ',"totalRemuneration":' || coalesce(t.remuneration_amount, 0)::text
    || ',"totalQuantity":' || t.quantity::text || ',"productType":' || t.product_type::text || ',"deliveryValidationStatus":' || t.delivery_validation_status::text
    || settlement_agreement_json(t.agreement_state, t.agreed_remuneration, t.dispute_id) || '}'
$$;

CREATE FUNCTION availability_settlement_line(t availability_transactions) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT '{"availabilityTransactionId":' || t.id::text || ',"resourceId":' || t.resource_id::text || ',"substationId":' || coalesce(t.substation_id::text, 'null')
    || ',"deliveryPercentage":' || coalesce(t.delivery_percentage::text, 'null') || ',"remunerationPercentage":' || coalesce(t.remuneration_percentage::text, 'null')
    || ',"availabilityPrice":' || t.availability_price::text || ',"totalRemuneration":' || coalesce(t.remuneration_amount, 0)::text
    || ',"totalQuantity":' || t.quantity::text || ',"productType":' || t.product_type::text || ',"deliveryValidationStatus":' || t.delivery_validation_status::text
    || settlement_agreement_json(t.agreement_state, t.agreed_remuneration, t.dispute_id) || '}'
$$;

-- The writing transaction's instant (see above): the same for all its versioned writes.
CREATE FUNCTION settlement_instant() RETURNS timestamptz LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  kept text := current_setting('flex.settlement_instant', true);
  c timestamptz;
BEGIN
  IF kept IS NOT NULL AND kept <> '' THEN RETURN to_timestamp(kept::float8); END IF;
  PERFORM pg_advisory_xact_lock_shared(727274100);
  c := clock_timestamp();
  IF date_trunc('milliseconds', c) < c THEN c := date_trunc('milliseconds', c) + interval '1 millisecond'; END IF;
  PERFORM set_config('flex.settlement_instant', extract(epoch FROM c)::text, true);
  RETURN c;
END $$;

-- The latest instant a reader may answer for (see above). Call it in a statement of its own,
-- before the statement that reads the versions.
CREATE FUNCTION settlement_read_instant() RETURNS timestamptz LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  c timestamptz := clock_timestamp();
  oldest timestamptz;
  unseen boolean;
BEGIN
  SELECT min(a.xact_start), coalesce(bool_or(a.xact_start IS NULL), false) INTO oldest, unseen
  FROM pg_locks l LEFT JOIN LATERAL pg_stat_get_activity(l.pid) a ON true
  WHERE l.locktype = 'advisory' AND l.classid = 0 AND l.objid = 727274100 AND l.objsubid = 1 AND l.granted AND l.pid IS NOT NULL AND l.pid <> pg_backend_pid();
  IF unseen THEN
    -- A writer whose start this role may not see (another role without pg_read_all_stats):
    -- wait for the writers of now to commit, and answer for the instant the wait ended.
    PERFORM pg_advisory_lock(727274100);
    c := clock_timestamp();
    PERFORM pg_advisory_unlock(727274100);
    oldest := NULL;
  END IF;
  RETURN date_trunc('milliseconds', least(c, oldest - interval '1 microsecond'));
END $$;

-- When versions began: asOf before it has no answer (400). -infinity where no transaction
-- existed then (a new installation): its history is complete.
CREATE TABLE settlement_history (
  single boolean PRIMARY KEY DEFAULT true CHECK (single),
  starts_at timestamptz NOT NULL
);

CREATE TABLE settlement_line_versions (
  kind smallint NOT NULL,              -- 1 flexibility, 2 availability
  transaction_id int NOT NULL,
  seller_organization_id int NOT NULL,
  buyer_organization_id int NOT NULL,
  start timestamptz NOT NULL,
  resource_id int NOT NULL,
  remuneration_amount numeric NOT NULL,
  agreed_remuneration numeric,         -- set once the line is agreed (accepted or resolved)
  line text NOT NULL,                  -- the line's JSON text in the specification
  recorded_at timestamptz NOT NULL,
  superseded_at timestamptz,           -- null: the current version
  CHECK (superseded_at >= recorded_at)
);
CREATE UNIQUE INDEX settlement_line_versions_current ON settlement_line_versions (kind, transaction_id) WHERE superseded_at IS NULL;
-- A specification reads the current versions of its period, and those superseded after asOf
-- (none for asOf = now): one index of each per side.
CREATE INDEX settlement_line_versions_seller ON settlement_line_versions (seller_organization_id, start) WHERE superseded_at IS NULL;
CREATE INDEX settlement_line_versions_buyer ON settlement_line_versions (buyer_organization_id, start) WHERE superseded_at IS NULL;
CREATE INDEX settlement_line_versions_seller_past ON settlement_line_versions (seller_organization_id, superseded_at, start) WHERE superseded_at IS NOT NULL;
CREATE INDEX settlement_line_versions_buyer_past ON settlement_line_versions (buyer_organization_id, superseded_at, start) WHERE superseded_at IS NOT NULL;

-- Records the lines of the given transactions (columns of either transaction table) at the
-- writer's instant. `fresh`: new transactions, which have no version yet. Otherwise the current
-- version is superseded and a new one added; a current version recorded at this instant or later
-- (this same transaction wrote it, or a transaction with a later instant committed first: no
-- reader could see it alone) is replaced in place. Every statement here finds its rows through
-- settlement_line_versions_current (measured: an anti-join over the table cost a sequential scan
-- per validation batch).
CREATE FUNCTION record_settlement_lines(k smallint, fresh boolean, ids int[], sellers int[], buyers int[], starts timestamptz[], resources int[], amounts numeric[], agreed numeric[], lines text[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  at timestamptz := settlement_instant();
  closed int[];
  keep int[];  -- null: all of ids
BEGIN
  IF NOT fresh THEN
    WITH c AS (
      UPDATE settlement_line_versions v SET superseded_at = at
      WHERE v.kind = k AND v.transaction_id = ANY(ids) AND v.superseded_at IS NULL AND v.recorded_at < at RETURNING v.transaction_id)
    SELECT array_agg(c.transaction_id) INTO closed FROM c;
    IF coalesce(cardinality(closed), 0) < cardinality(ids) THEN
      UPDATE settlement_line_versions v SET seller_organization_id = c.seller, buyer_organization_id = c.buyer, start = c.start, resource_id = c.resource,
          remuneration_amount = c.amount, agreed_remuneration = c.agreed, line = c.line
        FROM unnest(ids, sellers, buyers, starts, resources, amounts, agreed, lines) AS c(id, seller, buyer, start, resource, amount, agreed, line)
        WHERE v.kind = k AND v.transaction_id = ANY(ids) AND v.transaction_id = c.id AND v.superseded_at IS NULL AND v.recorded_at >= at;
      -- What is left: lines that had no version (none were closed or replaced).
      INSERT INTO settlement_line_versions (kind, transaction_id, seller_organization_id, buyer_organization_id, start, resource_id, remuneration_amount, agreed_remuneration, line, recorded_at)
        SELECT k, c.id, c.seller, c.buyer, c.start, c.resource, c.amount, c.agreed, c.line, at
        FROM unnest(ids, sellers, buyers, starts, resources, amounts, agreed, lines) AS c(id, seller, buyer, start, resource, amount, agreed, line)
        WHERE NOT (c.id = ANY(coalesce(closed, '{}')))
          AND NOT EXISTS (SELECT 1 FROM settlement_line_versions v WHERE v.kind = k AND v.transaction_id = ANY(ids) AND v.transaction_id = c.id AND v.superseded_at IS NULL);
      -- The closed ones get their new version below.
      keep := coalesce(closed, '{}');
    END IF;
  END IF;
  INSERT INTO settlement_line_versions (kind, transaction_id, seller_organization_id, buyer_organization_id, start, resource_id, remuneration_amount, agreed_remuneration, line, recorded_at)
    SELECT k, c.id, c.seller, c.buyer, c.start, c.resource, c.amount, c.agreed, c.line, at
    FROM unnest(ids, sellers, buyers, starts, resources, amounts, agreed, lines) AS c(id, seller, buyer, start, resource, amount, agreed, line)
    WHERE keep IS NULL OR c.id = ANY(keep);
END $$;

-- A deleted transaction's line ends at the writer's instant.
CREATE FUNCTION end_settlement_lines(k smallint, ids int[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  at timestamptz := settlement_instant();
BEGIN
  UPDATE settlement_line_versions v SET superseded_at = greatest(at, v.recorded_at)
    WHERE v.kind = k AND v.transaction_id = ANY(ids) AND v.superseded_at IS NULL;
END $$;

-- Statement triggers with transition tables: one call per statement, whatever its size (a
-- clearing, a validation batch of 200, a bulk insert). A statement that changes no line (the
-- validation bookkeeping) records nothing and takes no lock.
CREATE FUNCTION version_flexibility_lines() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM end_settlement_lines(1::smallint, (SELECT array_agg(o.id) FROM old_rows o));
    RETURN NULL;
  END IF;
  IF TG_OP = 'INSERT' THEN
    SELECT array_agg(n.id) AS ids, array_agg(n.seller_organization_id) AS sellers, array_agg(n.buyer_organization_id) AS buyers, array_agg(n.start) AS starts,
      array_agg(n.resource_id) AS resources, array_agg(coalesce(n.remuneration_amount, 0)) AS amounts, array_agg(n.agreed_remuneration) AS agreed, array_agg(flexibility_settlement_line(n)) AS lines
    INTO r FROM new_rows n;
  ELSE
    SELECT array_agg(n.id) AS ids, array_agg(n.seller_organization_id) AS sellers, array_agg(n.buyer_organization_id) AS buyers, array_agg(n.start) AS starts,
      array_agg(n.resource_id) AS resources, array_agg(coalesce(n.remuneration_amount, 0)) AS amounts, array_agg(n.agreed_remuneration) AS agreed, array_agg(flexibility_settlement_line(n)) AS lines
    INTO r FROM new_rows n JOIN old_rows o ON o.id = n.id
    -- The columns the line and its grouping are made of (compared as values: cheaper than the texts).
    WHERE row(n.seller_organization_id, n.buyer_organization_id, n.start, n.resource_id, n.delivery_validation_status, n.delivery_percentage, n.remuneration_percentage, n.remuneration_amount, n.unit_price, n.quantity, n.product_type, n.agreement_state, n.agreed_remuneration, n.dispute_id)
      IS DISTINCT FROM row(o.seller_organization_id, o.buyer_organization_id, o.start, o.resource_id, o.delivery_validation_status, o.delivery_percentage, o.remuneration_percentage, o.remuneration_amount, o.unit_price, o.quantity, o.product_type, o.agreement_state, o.agreed_remuneration, o.dispute_id);
  END IF;
  IF r.ids IS NOT NULL THEN PERFORM record_settlement_lines(1::smallint, TG_OP = 'INSERT', r.ids, r.sellers, r.buyers, r.starts, r.resources, r.amounts, r.agreed, r.lines); END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION version_availability_lines() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM end_settlement_lines(2::smallint, (SELECT array_agg(o.id) FROM old_rows o));
    RETURN NULL;
  END IF;
  IF TG_OP = 'INSERT' THEN
    SELECT array_agg(n.id) AS ids, array_agg(n.seller_organization_id) AS sellers, array_agg(n.buyer_organization_id) AS buyers, array_agg(n.start) AS starts,
      array_agg(n.resource_id) AS resources, array_agg(coalesce(n.remuneration_amount, 0)) AS amounts, array_agg(n.agreed_remuneration) AS agreed, array_agg(availability_settlement_line(n)) AS lines
    INTO r FROM new_rows n;
  ELSE
    SELECT array_agg(n.id) AS ids, array_agg(n.seller_organization_id) AS sellers, array_agg(n.buyer_organization_id) AS buyers, array_agg(n.start) AS starts,
      array_agg(n.resource_id) AS resources, array_agg(coalesce(n.remuneration_amount, 0)) AS amounts, array_agg(n.agreed_remuneration) AS agreed, array_agg(availability_settlement_line(n)) AS lines
    INTO r FROM new_rows n JOIN old_rows o ON o.id = n.id
    -- The columns the line and its grouping are made of (compared as values: cheaper than the texts).
    WHERE row(n.seller_organization_id, n.buyer_organization_id, n.start, n.resource_id, n.substation_id, n.delivery_validation_status, n.delivery_percentage, n.remuneration_percentage, n.remuneration_amount, n.availability_price, n.quantity, n.product_type, n.agreement_state, n.agreed_remuneration, n.dispute_id)
      IS DISTINCT FROM row(o.seller_organization_id, o.buyer_organization_id, o.start, o.resource_id, o.substation_id, o.delivery_validation_status, o.delivery_percentage, o.remuneration_percentage, o.remuneration_amount, o.availability_price, o.quantity, o.product_type, o.agreement_state, o.agreed_remuneration, o.dispute_id);
  END IF;
  IF r.ids IS NOT NULL THEN PERFORM record_settlement_lines(2::smallint, TG_OP = 'INSERT', r.ids, r.sellers, r.buyers, r.starts, r.resources, r.amounts, r.agreed, r.lines); END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER flexibility_lines_inserted AFTER INSERT ON flexibility_transactions REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION version_flexibility_lines();
CREATE TRIGGER flexibility_lines_updated AFTER UPDATE ON flexibility_transactions REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION version_flexibility_lines();
CREATE TRIGGER flexibility_lines_deleted AFTER DELETE ON flexibility_transactions REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION version_flexibility_lines();
CREATE TRIGGER availability_lines_inserted AFTER INSERT ON availability_transactions REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION version_availability_lines();
CREATE TRIGGER availability_lines_updated AFTER UPDATE ON availability_transactions REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION version_availability_lines();
CREATE TRIGGER availability_lines_deleted AFTER DELETE ON availability_transactions REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION version_availability_lines();

-- Existing installations: history starts now, with each transaction's line as it stands.
INSERT INTO settlement_history (starts_at)
  SELECT CASE WHEN EXISTS (SELECT 1 FROM flexibility_transactions) OR EXISTS (SELECT 1 FROM availability_transactions) THEN settlement_instant() ELSE '-infinity' END;
INSERT INTO settlement_line_versions (kind, transaction_id, seller_organization_id, buyer_organization_id, start, resource_id, remuneration_amount, agreed_remuneration, line, recorded_at)
  SELECT 1, t.id, t.seller_organization_id, t.buyer_organization_id, t.start, t.resource_id, coalesce(t.remuneration_amount, 0), t.agreed_remuneration, flexibility_settlement_line(t), settlement_instant()
  FROM flexibility_transactions t;
INSERT INTO settlement_line_versions (kind, transaction_id, seller_organization_id, buyer_organization_id, start, resource_id, remuneration_amount, agreed_remuneration, line, recorded_at)
  SELECT 2, t.id, t.seller_organization_id, t.buyer_organization_id, t.start, t.resource_id, coalesce(t.remuneration_amount, 0), t.agreed_remuneration, availability_settlement_line(t), settlement_instant()
  FROM availability_transactions t;
