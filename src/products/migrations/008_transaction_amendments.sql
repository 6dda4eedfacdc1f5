-- Changes and cancellations of flexibility transactions by their buyer before the period starts
-- (docs/flexibility-loop.md). A cancelled transaction is deleted (its settlement line ends with
-- it, its event is deleted from the VTN); this log keeps what it was, who changed or cancelled it,
-- when and why. No foreign key: the log outlives the transaction.
CREATE TABLE flexibility_transaction_amendments (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  transaction_id int NOT NULL,
  transaction_correlation_id uuid NOT NULL,
  seller_organization_id int NOT NULL,
  buyer_organization_id int NOT NULL,
  kind text NOT NULL CHECK (kind IN ('change', 'cancellation')),
  reason text,
  before json NOT NULL,
  after json,
  amended_by text NOT NULL,
  amended_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((kind = 'cancellation') = (after IS NULL))
);
CREATE INDEX flexibility_transaction_amendments_transaction ON flexibility_transaction_amendments (transaction_id, id);
