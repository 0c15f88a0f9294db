-- migration: no-transaction
-- squawk-disable-assume-in-transaction
-- Searches whose cost does not grow with the account (issue 44, docs/decisions.md). Both indexes are on tables
-- that exist and grow, so they are built CONCURRENTLY, outside a transaction: each statement runs alone and is
-- safe to run again.

-- Contact search keys of a term of one or two characters: every one and every two characters of the first 200
-- of each lowercased text (a contact's name and email, or a search's term), behind the account's prefix as in
-- contact_search_keys (migration 0032), and for a longer text the same long-text key ('…',
-- contact_search_long_text_key). A contact whose name or email holds a short term (ILIKE '%term%') has every
-- key of the term, or the long-text key.
CREATE OR REPLACE FUNCTION contact_short_search_keys(account text, VARIADIC texts text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  select coalesce(array_agg(distinct owner.prefix || keys.key), '{}')
  from (select substr(md5(account), 1, 6) as prefix) as owner,
    unnest(texts) as given(text),
    lower(given.text) as lowered(text),
    lateral (
      select substr(lowered.text, i, 1) from generate_series(1, least(length(lowered.text), 200)) as i
      union all
      select substr(lowered.text, i, 2) from generate_series(1, least(length(lowered.text), 200) - 1) as i
      union all
      select '…' where length(lowered.text) > 200
    ) as keys(key)
  where lowered.text is not null
$$;--> statement-breakpoint
CREATE INDEX CONCURRENTLY IF NOT EXISTS "contacts_account_short_search_keys" ON "contacts" USING gin (contact_short_search_keys("account_id", "name", "email"));--> statement-breakpoint
-- A room search for a common word walks the account's messages newest first to its newest hits.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "room_messages_account_newest" ON "room_messages" USING btree ("account_id","created_at","id");
