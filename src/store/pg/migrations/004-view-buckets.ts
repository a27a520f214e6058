/** Migration 4: page views over time (issue 33), one row per bucket (grain, start), dimension and key. */
export default `
CREATE TABLE view_buckets (
  grain text NOT NULL,
  start text COLLATE "C" NOT NULL,
  dim text NOT NULL,
  key text COLLATE "C" NOT NULL,
  views bigint NOT NULL,
  PRIMARY KEY (grain, dim, start, key)
);
`;
