-- Search keyed by the account (docs/decisions.md): the keys of a contact search and the words of a room search
-- are each behind the account's search prefix, the first six hex digits of the md5 of its id, so that a
-- search's index reads its own account's entries only. The prefix is written out in each function: a function
-- that an index or a generated column calls resolves other functions by the search_path, which a restore
-- empties; the built-in ones (pg_catalog) it always finds.

-- Contact search keys: every three characters of the first 200 of each lowercased text (a contact's name and
-- email, or a search's term), and for a longer text the long-text key (the prefix and '…'), so that a row has
-- a few hundred keys at most whatever it holds. A contact whose name or email holds the term (ILIKE '%term%')
-- has every key of the term, or has the long-text key (contact_search_long_text_key).
CREATE FUNCTION contact_search_keys(account text, VARIADIC texts text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  select coalesce(array_agg(distinct owner.prefix || keys.key), '{}')
  from (select substr(md5(account), 1, 6) as prefix) as owner,
    unnest(texts) as given(text),
    lower(given.text) as lowered(text),
    lateral (
      select substr(left(lowered.text, 200), i, 3) from generate_series(1, least(length(lowered.text), 200) - 2) as i
      union all
      select '…' where length(lowered.text) > 200
    ) as keys(key)
  where lowered.text is not null
$$;--> statement-breakpoint
-- The long-text key of contact_search_keys: the contacts whose name or email is over 200 characters, which
-- a search reads whatever its term (their keys cover their first 200 characters only).
CREATE FUNCTION contact_search_long_text_key(account text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  select array[substr(md5(account), 1, 6) || '…']
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