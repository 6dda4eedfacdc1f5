-- Grid resources bound to the OpenADR VEN resource that controls them (docs/flexibility-loop.md).
-- The VEN and its resource live in the VTN of `organization_id` (the resource owner's); they are
-- named by the VTN's string ids, which are random and never reused, so a binding whose VEN or
-- resource was deleted can never point at another one. One VEN resource controls at most one
-- grid resource: its usage reports must land in one actual register.
CREATE TABLE grid_resource_bindings (
  resource_id int PRIMARY KEY REFERENCES grid_resources (id) ON DELETE CASCADE,
  organization_id int NOT NULL REFERENCES organizations (id),
  ven_id text NOT NULL,
  ven_resource_id text NOT NULL,
  bound_by text NOT NULL,
  bound_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, ven_resource_id)
);

-- Readings of a register written from a VEN's usage reports: each write's span and the
-- updatedAt it gave its readings (ms since the epoch). A reading of the register is the VEN's
-- while its updatedAt is still that of a write whose span holds it; any other write (meter data,
-- a correction) moves its updatedAt and makes it someone else's.
CREATE TABLE grid_ven_readings (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  register_id int NOT NULL REFERENCES registers (id) ON DELETE CASCADE,
  updated_ms bigint NOT NULL,
  span_start timestamptz NOT NULL,
  span_end timestamptz NOT NULL,
  readings int NOT NULL,
  resource_id int NOT NULL,
  organization_id int NOT NULL,
  report_id text NOT NULL,
  written_at timestamptz NOT NULL DEFAULT now(),
  CHECK (span_start < span_end)
);
CREATE INDEX grid_ven_readings_register ON grid_ven_readings (register_id, span_start);
