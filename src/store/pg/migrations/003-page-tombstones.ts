/** Migration 3: when each rendered page was stored, so removals (tombstones) can be pruned after an age. */
export default `
-- Rows before this migration count as stored now: their tombstones are pruned one full age later.
ALTER TABLE rendered_pages ADD COLUMN stored_at timestamptz NOT NULL DEFAULT now();
CREATE INDEX rendered_pages_tombstones ON rendered_pages (stored_at) WHERE body IS NULL;
`;
