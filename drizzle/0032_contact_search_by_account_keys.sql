-- Contact search keys: every three characters of the lowercased texts (a contact's name and email, or a
-- search's term), each behind the first six hex digits of the account's md5. A contact whose name or email
-- holds the term (ILIKE '%term%') has every key of the term, in its own account only.
CREATE FUNCTION contact_search_keys(account text, VARIADIC texts text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  select coalesce(array_agg(distinct owner.prefix || substr(lowered.text, i, 3)), '{}')
  from (select substr(md5(account), 1, 6) as prefix) as owner,
    unnest(texts) as given(text),
    lower(given.text) as lowered(text),
    generate_series(1, length(lowered.text) - 2) as i
$$;--> statement-breakpoint
DROP INDEX "contacts_account_search";--> statement-breakpoint
CREATE INDEX "contacts_account_search_keys" ON "contacts" USING gin (contact_search_keys("account_id", "name", "email"));