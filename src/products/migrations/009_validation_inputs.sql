-- Where a delivery validation's figures came from (docs/flexibility-loop.md): the actual
-- register and whether its readings were meter data, the VEN's usage reports or both; the
-- reference and what it is. Null until a validation has read meter data.
ALTER TABLE flexibility_transactions ADD COLUMN validation_inputs json;
-- Kept with each validation version too (GET …/validations shows them).
ALTER TABLE transaction_validations ADD COLUMN inputs json;
