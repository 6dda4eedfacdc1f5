-- Event periods for flexibility transactions accepted before event periods were recorded
-- (meter migration 002): accepting an order records its delivery period on the actual register
-- of the resource (orders.ts); transactions accepted earlier left only their event days. Each is
-- given its order's period now, where the register still has an event day on a local day the
-- period touches (an administrator who took the day out of the register's event days meant it:
-- a period would make it an event day again), and the period fits the 31-day limit of event
-- periods. Baselines then compare and adjust those days over their event hours, as for newer
-- transactions (docs/virtual-registers.md).
INSERT INTO register_event_periods (register_id, starts_at, ends_at)
SELECT DISTINCT r.actual_register_id, o.start, o."end"
FROM flexibility_transactions t
  JOIN flexibility_orders o ON o.id = t.flexibility_order_id
  JOIN grid_resources r ON r.id = t.resource_id
  JOIN registers g ON g.id = r.actual_register_id
WHERE o."end" > o.start AND o."end" - o.start <= interval '31 days'
  AND EXISTS (
    SELECT 1 FROM register_event_days d
    WHERE d.register_id = g.id
      AND d.day BETWEEN (o.start AT TIME ZONE g.time_zone)::date AND ((o."end" - interval '1 microsecond') AT TIME ZONE g.time_zone)::date)
ON CONFLICT DO NOTHING;
