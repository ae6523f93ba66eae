-- Runs' taint ledgers: the provenance of each result a run took in, in
-- order, never the content. Append-only.
CREATE TABLE mcpgen_run_ledger (
	run_id  text NOT NULL,
	seq     integer NOT NULL CHECK (seq >= 0),
	record  text NOT NULL,
	PRIMARY KEY (run_id, seq)
);
