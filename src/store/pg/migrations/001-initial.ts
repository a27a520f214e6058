/** Migration 1: the first schema of the PostgreSQL store (SQL in a module, so the server bundle carries it). */
export default `
-- The first schema of the PostgreSQL store: typed columns where a query filters or sorts, the record as JSONB.
-- Text columns that are compared or sorted like the lowdb store compares JS strings use COLLATE "C" (byte order).

CREATE TABLE store_state (
  name text PRIMARY KEY,
  value bigint NOT NULL
);
INSERT INTO store_state (name, value) VALUES ('articles_version', 0);

CREATE TABLE meta (
  key text PRIMARY KEY,
  value jsonb NOT NULL
);

CREATE TABLE articles (
  id text COLLATE "C" PRIMARY KEY,
  slug text NOT NULL,
  status text NOT NULL,
  section text NOT NULL,
  created_by text,
  is_breaking boolean NOT NULL,
  is_editors_pick boolean NOT NULL,
  source_label text,
  -- publishedAt, else updatedAt: the listing order (as stored, compared as strings) and the date filter (normalised).
  sort_date text COLLATE "C" NOT NULL,
  sort_at timestamptz,
  updated_at text COLLATE "C" NOT NULL,
  scheduled_for timestamptz,
  origin_source text,
  origin_guid text,
  canonical_url text,
  version integer,
  -- title, dek, author, tags and source label, lowercased: the admin's substring filter.
  filter_text text NOT NULL,
  search tsvector NOT NULL,
  doc jsonb NOT NULL
);
CREATE INDEX articles_slug ON articles (slug);
CREATE INDEX articles_recent ON articles (sort_date DESC, id DESC);
CREATE INDEX articles_updated ON articles (updated_at DESC, id DESC);
CREATE INDEX articles_published ON articles (section, sort_date DESC, id DESC) WHERE status = 'published';
CREATE INDEX articles_origin ON articles (origin_source, origin_guid);
CREATE INDEX articles_canonical ON articles (canonical_url);
CREATE INDEX articles_due ON articles (scheduled_for) WHERE status = 'scheduled';
CREATE INDEX articles_search ON articles USING gin (search);

CREATE TABLE votes (
  article_id text NOT NULL,
  visitor_id text NOT NULL,
  kind text NOT NULL,
  PRIMARY KEY (article_id, visitor_id)
);

-- Counted votes, an editor's adjustments (added, shown never below zero) and page views, per article.
CREATE TABLE tallies (
  article_id text PRIMARY KEY,
  likes bigint NOT NULL DEFAULT 0,
  dislikes bigint NOT NULL DEFAULT 0,
  adjust_likes bigint NOT NULL DEFAULT 0,
  adjust_dislikes bigint NOT NULL DEFAULT 0,
  views bigint NOT NULL DEFAULT 0
);

CREATE TABLE comments (
  id text COLLATE "C" PRIMARY KEY,
  article_id text NOT NULL,
  status text NOT NULL,
  created_at text COLLATE "C" NOT NULL,
  doc jsonb NOT NULL
);
CREATE INDEX comments_recent ON comments (created_at DESC, id DESC);
CREATE INDEX comments_article ON comments (article_id, created_at DESC, id DESC);

CREATE TABLE sources (
  id text PRIMARY KEY,
  seq bigserial NOT NULL,
  doc jsonb NOT NULL
);

CREATE TABLE subscribers (
  id text PRIMARY KEY,
  seq bigserial NOT NULL,
  email text NOT NULL UNIQUE,
  token_hash text NOT NULL,
  created_at text COLLATE "C" NOT NULL,
  doc jsonb NOT NULL
);
CREATE INDEX subscribers_token ON subscribers (token_hash);
CREATE INDEX subscribers_confirm ON subscribers ((doc ->> 'confirmTokenHash'));

CREATE TABLE briefing_runs (
  id text PRIMARY KEY,
  seq bigserial NOT NULL,
  date text NOT NULL,
  doc jsonb NOT NULL
);
CREATE INDEX briefing_runs_date ON briefing_runs (date);

CREATE TABLE briefing_deliveries (
  run_id text NOT NULL,
  subscriber_id text NOT NULL,
  doc jsonb NOT NULL,
  PRIMARY KEY (run_id, subscriber_id)
);

CREATE TABLE users (
  id text PRIMARY KEY,
  seq bigserial NOT NULL,
  username_key text NOT NULL UNIQUE,
  doc jsonb NOT NULL
);

CREATE TABLE audit (
  seq bigserial PRIMARY KEY,
  at text NOT NULL,
  doc jsonb NOT NULL
);

CREATE TABLE sessions (
  id text PRIMARY KEY,
  user_id text NOT NULL,
  expires_at text COLLATE "C" NOT NULL,
  doc jsonb NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_expiry ON sessions (expires_at);

CREATE SEQUENCE jobs_seq;
CREATE TABLE jobs (
  id bigint PRIMARY KEY DEFAULT nextval('jobs_seq'),
  path text NOT NULL UNIQUE,
  created_at text NOT NULL,
  queued_at text COLLATE "C" NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  last_error text,
  ord bigint NOT NULL
);
CREATE INDEX jobs_order ON jobs (ord);

-- Rate-limit windows and login throttles: shared by every server, kept across restarts.
CREATE TABLE limits (
  key text PRIMARY KEY,
  value jsonb NOT NULL,
  expires_at bigint NOT NULL
);
CREATE INDEX limits_expiry ON limits (expires_at);

CREATE TABLE revisions (
  article_id text NOT NULL,
  rev integer NOT NULL,
  doc jsonb NOT NULL,
  PRIMARY KEY (article_id, rev)
);

CREATE TABLE trash (
  article_id text PRIMARY KEY,
  slug text NOT NULL,
  deleted_at text COLLATE "C" NOT NULL,
  doc jsonb NOT NULL
);
CREATE INDEX trash_slug ON trash (slug);
`;
