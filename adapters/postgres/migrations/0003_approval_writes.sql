-- compatible-from: 1
-- docv is the format of the document (see docVersion in approvals.go): a
-- build refuses a row whose format is newer than it reads. writer marks the
-- write that stored the row, so a writer whose commit was cut off can tell
-- whether it was stored. Builds that predate both columns ignore them.
ALTER TABLE mcpgen_approvals
	ADD COLUMN docv integer NOT NULL DEFAULT 1 CHECK (docv >= 1),
	ADD COLUMN writer text;
