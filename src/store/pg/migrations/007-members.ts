/** Migration 7: members (issue 48): reader accounts, unique by e-mail, found by their Stripe customer. */
export default `
CREATE TABLE members (
  id text PRIMARY KEY,
  email text NOT NULL UNIQUE,
  stripe_customer_id text UNIQUE,
  created_at text COLLATE "C" NOT NULL,
  doc jsonb NOT NULL
);
CREATE INDEX members_created ON members (created_at DESC, id DESC);
`;
