-- Settlement agreed (docs/products.md, "Settlement agreed"): the seller's responses to
-- settlement lines (accepted or disputed) and the disputes they open.
--
-- Both are versioned by the writer's settlement instant (migration 003) so that asOf stays
-- exact: a response is written once (recorded_at); a dispute changes state once, from open to
-- resolved or withdrawn, so its state as of T is "open" if opened_at <= T < closed_at, and its
-- closing state once closed_at <= T. The line's own agreement (transactions' agreement_state,
-- agreed_remuneration, dispute_id) is versioned with the line itself.
CREATE TABLE settlement_disputes (
  id serial PRIMARY KEY,
  kind smallint NOT NULL,                  -- 1 flexibility, 2 availability
  transaction_id int NOT NULL,
  seller_organization_id int NOT NULL REFERENCES organizations (id),
  buyer_organization_id int NOT NULL REFERENCES organizations (id),
  start timestamptz NOT NULL,              -- the transaction's: disputes are listed by period
  state smallint NOT NULL DEFAULT 1,       -- 1 open, 2 resolved, 3 withdrawn
  reason text NOT NULL,
  disputed_remuneration numeric NOT NULL,  -- the line's totalRemuneration when disputed
  opened_by text NOT NULL,
  opened_at timestamptz NOT NULL,
  closed_by text,
  closed_at timestamptz,
  closing_reason text,
  settled_remuneration numeric,            -- resolved: the amount the parties settled on
  settled_remuneration_percentage numeric, -- resolved: the percentage, when they settled on one
  CHECK ((state = 1) = (closed_at IS NULL)),
  CHECK (state <> 2 OR settled_remuneration IS NOT NULL)
);
-- At most one open dispute per line.
CREATE UNIQUE INDEX settlement_disputes_open ON settlement_disputes (kind, transaction_id) WHERE state = 1;
CREATE INDEX settlement_disputes_seller ON settlement_disputes (seller_organization_id, start);
CREATE INDEX settlement_disputes_buyer ON settlement_disputes (buyer_organization_id, start);

CREATE TABLE settlement_responses (
  id serial PRIMARY KEY,
  kind smallint NOT NULL,
  transaction_id int NOT NULL,
  seller_organization_id int NOT NULL REFERENCES organizations (id),
  buyer_organization_id int NOT NULL REFERENCES organizations (id),
  start timestamptz NOT NULL,
  response smallint NOT NULL,              -- 1 accepted, 2 disputed
  reason text,
  line_remuneration numeric NOT NULL,      -- the line's totalRemuneration answered
  dispute_id int REFERENCES settlement_disputes (id),
  created_by text NOT NULL,
  recorded_at timestamptz NOT NULL
);
CREATE INDEX settlement_responses_seller ON settlement_responses (seller_organization_id, start);
CREATE INDEX settlement_responses_buyer ON settlement_responses (buyer_organization_id, start);

ALTER TABLE flexibility_transactions ADD FOREIGN KEY (dispute_id) REFERENCES settlement_disputes (id);
ALTER TABLE availability_transactions ADD FOREIGN KEY (dispute_id) REFERENCES settlement_disputes (id);
