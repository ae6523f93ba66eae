-- Approvals: the document is the runtime's JSON encoding of an Approval,
-- kept as text so the arguments and results keep their exact bytes (jsonb
-- would rewrite numbers and break the arguments' digest). state and expires
-- are copies for queries; version counts the writes, for compare-and-swap.
CREATE TABLE mcpgen_approvals (
	id       text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{32}$'),
	state    text NOT NULL CHECK (state IN ('pending', 'approved', 'denied', 'expired', 'executing', 'done')),
	created  timestamptz NOT NULL,
	expires  timestamptz NOT NULL,
	version  bigint NOT NULL DEFAULT 1,
	doc      text NOT NULL
);
CREATE INDEX mcpgen_approvals_created ON mcpgen_approvals (created, id);
CREATE INDEX mcpgen_approvals_expires ON mcpgen_approvals (expires);

-- Every change of state is announced to the resumers waiting in other
-- processes (LISTEN mcpgen_approvals), on commit, whoever made it.
CREATE FUNCTION mcpgen_approvals_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('mcpgen_approvals', NEW.id);
	RETURN NEW;
END
$$;
CREATE TRIGGER mcpgen_approvals_notify AFTER UPDATE ON mcpgen_approvals
	FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state)
	EXECUTE FUNCTION mcpgen_approvals_notify();

-- The server registry: one runtime/manager ServerConfig per row. The
-- Registry validates every entry it loads, so a row written around it is
-- refused, not used.
CREATE TABLE mcpgen_servers (
	id       text PRIMARY KEY,
	config   jsonb NOT NULL,
	updated  timestamptz NOT NULL DEFAULT now()
);
