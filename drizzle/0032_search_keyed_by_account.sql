-- Search keyed by the account (docs/decisions.md): the keys of a contact search and the words of a room search
-- are each behind the account's search prefix, the first six hex digits of the md5 of its id, so that a
-- search's index reads its own account's entries only. The prefix is written out in each function: a function
-- that an index or a generated column calls resolves other functions by the search_path, which a restore
-- empties; the built-in ones (pg_catalog) it always finds.

-- Contact search keys: every three characters of the lowercased texts (a contact's name and email, or a
-- search's term). A contact whose name or email holds the term (ILIKE '%term%') has every key of the term.
CREATE FUNCTION contact_search_keys(account text, VARIADIC texts text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  select coalesce(array_agg(distinct owner.prefix || substr(lowered.text, i, 3)), '{}')
  from (select substr(md5(account), 1, 6) as prefix) as owner,
    unnest(texts) as given(text),
    lower(given.text) as lowered(text),
    generate_series(1, length(lowered.text) - 2) as i
$$;--> statement-breakpoint
-- A message's words for room search: to_tsvector('simple', content), each lexeme (its positions kept) behind
-- the account's prefix, by rewriting the quoted lexemes of the tsvector's text ('word', a quote in it
-- doubled). A word of over 2,040 bytes would be too long for a tsvector once prefixed (2,046): it is left
-- out, as to_tsvector leaves out words of 2,047 bytes and more. Only a content longer than that can hold one.
CREATE FUNCTION room_search_vector(account text, content text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  select regexp_replace(
    case when octet_length(content) <= 2040 then to_tsvector('simple', content)
      else ts_delete(to_tsvector('simple', content), array(
        select word.lexeme from unnest(to_tsvector('simple', content)) as word
        where octet_length(word.lexeme) > 2040))
    end::text,
    '''((?:[^'']|'''')*)''', '''' || substr(md5(account), 1, 6) || '\1''', 'g')::tsvector
$$;--> statement-breakpoint
-- A room search's query: websearch_to_tsquery('simple', words), its lexemes behind the account's prefix as
-- room_search_vector puts them (the search's words are at most 200 characters: never too long once prefixed).
CREATE FUNCTION room_search_query(account text, words text) RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  select regexp_replace(websearch_to_tsquery('simple', words)::text,
    '''((?:[^'']|'''')*)''', '''' || substr(md5(account), 1, 6) || '\1''', 'g')::tsquery
$$;--> statement-breakpoint
DROP INDEX "contacts_account_search";--> statement-breakpoint
DROP INDEX "room_messages_account_search";--> statement-breakpoint
ALTER TABLE "room_messages" drop column "search_vector";--> statement-breakpoint
ALTER TABLE "room_messages" ADD COLUMN "search_vector" "tsvector" GENERATED ALWAYS AS (room_search_vector(account_id, content)) STORED;--> statement-breakpoint
CREATE INDEX "contacts_account_search_keys" ON "contacts" USING gin (contact_search_keys("account_id", "name", "email"));--> statement-breakpoint
CREATE INDEX "room_messages_account_keyed_search" ON "room_messages" USING gin ("search_vector");