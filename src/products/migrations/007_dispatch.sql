-- Dispatch of flexibility transactions as OpenADR events to the VEN resource bound to their grid
-- resource (docs/flexibility-loop.md). One row per transaction, written by triggers in the
-- statement that creates, changes or deletes the transaction: whatever code path commits a
-- transaction, its dispatch is queued in the same commit (the outbox), and the dispatch job
-- (dispatch.ts) claims it with FOR UPDATE SKIP LOCKED and writes the event in its own claiming
-- transaction, so each committed state is dispatched exactly once, across instances and restarts.
--   state     pending: the VTN does not show the transaction's current figures yet;
--             sent: the event `event_id` in the VTN of `vtn_organization_id` shows them;
--             none: there is no event, `reason` says why (not bound, VEN resource gone).
-- No foreign key to the transaction: a cancelled (deleted) transaction's row stays pending until
-- its event is deleted, then goes.
CREATE TABLE flexibility_dispatches (
  transaction_id int PRIMARY KEY,
  state text NOT NULL CHECK (state IN ('pending', 'sent', 'none')),
  vtn_organization_id int,
  event_id text,
  reason text,
  note text,
  attempts int NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error text,
  queued_at timestamptz NOT NULL DEFAULT now(),
  dispatched_at timestamptz
);
CREATE INDEX flexibility_dispatches_due ON flexibility_dispatches (next_attempt_at, transaction_id) WHERE state = 'pending';

-- A new transaction: pending when its resource is bound, else none at once (nothing to write).
CREATE FUNCTION queue_new_dispatches() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO flexibility_dispatches (transaction_id, state, reason)
    SELECT n.id, CASE WHEN b.resource_id IS NULL THEN 'none' ELSE 'pending' END,
      CASE WHEN b.resource_id IS NULL THEN 'the grid resource is not bound to a VEN resource' END
    FROM new_rows n LEFT JOIN grid_resource_bindings b ON b.resource_id = n.resource_id
  ON CONFLICT (transaction_id) DO UPDATE SET state = EXCLUDED.state, reason = EXCLUDED.reason, note = NULL, attempts = 0, next_attempt_at = now(), last_error = NULL, queued_at = now();
  RETURN NULL;
END $$;

-- A change of what the event says (or of where it goes), or a deletion: pending again.
CREATE FUNCTION queue_changed_dispatch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE flexibility_dispatches SET state = 'pending', reason = NULL, note = NULL, attempts = 0, next_attempt_at = now(), last_error = NULL, queued_at = now()
    WHERE transaction_id = OLD.id;
  RETURN NULL;
END $$;

CREATE TRIGGER flexibility_dispatch_inserted AFTER INSERT ON flexibility_transactions REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION queue_new_dispatches();
CREATE TRIGGER flexibility_dispatch_changed AFTER UPDATE OF quantity, start, "end", resource_id ON flexibility_transactions FOR EACH ROW
  WHEN (row(OLD.quantity, OLD.start, OLD."end", OLD.resource_id) IS DISTINCT FROM row(NEW.quantity, NEW.start, NEW."end", NEW.resource_id))
  EXECUTE FUNCTION queue_changed_dispatch();
CREATE TRIGGER flexibility_dispatch_deleted AFTER DELETE ON flexibility_transactions FOR EACH ROW EXECUTE FUNCTION queue_changed_dispatch();

-- Transactions that existed before: none, they were not dispatched.
INSERT INTO flexibility_dispatches (transaction_id, state, reason)
  SELECT id, 'none', 'created before dispatch to VENs existed' FROM flexibility_transactions;
