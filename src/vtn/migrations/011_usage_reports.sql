-- VEN usage reports on their way to meter data (docs/flexibility-loop.md): every report whose
-- payloads include USAGE or DEMAND is queued here by the statement that writes it (create or
-- replace), whichever surface wrote it, and the usage job stores it as readings of the bound grid
-- resource's actual register, then records what became of each of its resources (`outcome`,
-- served by GET …/reports/{reportID}/processing). A report without such payloads is not queued.
CREATE TABLE vtn_usage_reports (
  organization_id int NOT NULL,
  report_id text NOT NULL,
  state text NOT NULL CHECK (state IN ('pending', 'processed')),
  outcome json,
  attempts int NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error text,
  queued_at timestamptz NOT NULL DEFAULT now(),
  processed_at timestamptz,
  PRIMARY KEY (organization_id, report_id),
  FOREIGN KEY (organization_id, report_id) REFERENCES vtn_reports (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX vtn_usage_reports_due ON vtn_usage_reports (next_attempt_at) WHERE state = 'pending';

CREATE FUNCTION queue_usage_report() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.doc::jsonb @? '$.resources[*].intervals[*].payloads[*] ? (@.type == "USAGE" || @.type == "DEMAND")' THEN
    INSERT INTO vtn_usage_reports (organization_id, report_id, state) VALUES (NEW.organization_id, NEW.id, 'pending')
    ON CONFLICT (organization_id, report_id) DO UPDATE SET state = 'pending', outcome = NULL, attempts = 0, next_attempt_at = now(), last_error = NULL,
      queued_at = now(), processed_at = NULL;
  ELSE
    DELETE FROM vtn_usage_reports WHERE organization_id = NEW.organization_id AND report_id = NEW.id;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER vtn_usage_report_written AFTER INSERT OR UPDATE OF doc ON vtn_reports FOR EACH ROW EXECUTE FUNCTION queue_usage_report();
