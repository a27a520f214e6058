/** Migration 6: live coverage (issue 35): each live article's coverage state, and its updates as rows of their own. */
export default `
CREATE TABLE live_coverage (
  article_id text PRIMARY KEY,
  started_at text COLLATE "C" NOT NULL,
  doc jsonb NOT NULL
);
CREATE TABLE live_updates (
  id text PRIMARY KEY,
  article_id text NOT NULL,
  created_at text COLLATE "C" NOT NULL,
  doc jsonb NOT NULL
);
CREATE INDEX live_updates_article ON live_updates (article_id, created_at DESC, id DESC);
`;
