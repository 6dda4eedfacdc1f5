-- Holidays of a baseline (virtual) register: the PJM and CAISO baselines class them with
-- Sundays and weekend days. No calendar is built in: whose holidays count is the program's rule.
CREATE TABLE register_holidays (
  register_id int NOT NULL REFERENCES registers (id) ON DELETE CASCADE,
  day date NOT NULL,
  PRIMARY KEY (register_id, day)
);
