/** Migration 2: what several servers on one database share: job claims with a lease, and the rendered pages they copy. */
export default `
-- A job is claimed by one server until its lease runs out: a server killed mid-job leaves a lease
-- that expires, and another server takes the job over.
ALTER TABLE jobs ADD COLUMN claimed_by text, ADD COLUMN lease_until bigint;

-- Every page a server renders, once, for the other servers to copy into their own served folder.
-- body NULL: the page was removed. seq orders the changes; sha256 lets a starting server skip
-- the pages it already holds.
CREATE SEQUENCE rendered_pages_seq;
CREATE TABLE rendered_pages (
  path text COLLATE "C" PRIMARY KEY,
  body bytea,
  sha256 text,
  seq bigint NOT NULL,
  origin text NOT NULL
);
CREATE INDEX rendered_pages_order ON rendered_pages (seq);
`;
