// What a problem document must never show: words only the database would use (table, relation,
// constraint and column names, SQLSTATE texts). Error details say what the client did wrong in
// our own words (docs/errors.md).
export const DATABASE_WORDS = /relation|constraint|table "|column "|violates|SQLSTATE|syntax for type|Key \(|unsupported Unicode|byte sequence|pg_|duplicate key|type jsonb?\b|null value in/i;
