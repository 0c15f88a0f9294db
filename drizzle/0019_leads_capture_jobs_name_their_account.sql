DO $$
BEGIN
  -- Capture jobs queued before their data named the lead's account (issue 28): the capture reads the lead
  -- by account and id, so such a job would find nothing. Unclaimed leads have no account and no capture job.
  IF to_regclass('pgboss.job') IS NOT NULL THEN
    UPDATE pgboss.job AS j SET data = j.data || jsonb_build_object('account_id', l."account_id")
      FROM "leads" AS l
      WHERE j.name = 'leads.capture-lead' AND j.state IN ('created', 'retry')
        AND NOT (j.data ? 'account_id') AND l."id" = j.data ->> 'lead_id' AND l."account_id" IS NOT NULL;
  END IF;
END $$;
