import { Type } from '@sinclair/typebox'
import { Integer } from '../../platform/http/schemas.js'

/** The most accounts `top` lists per queue and state. */
export const MAX_TOP_ACCOUNTS = 100

/** `GET /v1/admin/jobs?top=`: how many accounts to list per queue. */
export const JobQueuesQuery = Type.Object({
  top: Integer({
    minimum: 1,
    maximum: MAX_TOP_ACCOUNTS,
    default: 10,
    description:
      'How many accounts to list per queue, for its waiting jobs and for its active jobs (1 to 100)',
  }),
})

const AccountJobs = Type.Object(
  {
    account: Type.String({
      description:
        "The account the jobs work for (pg-boss's job group): an account id, or `meta-page:<page id>` for Meta " +
        'lead events not filed yet (their account is known once filed)',
    }),
    jobs: Type.Integer({ minimum: 0 }),
  },
  { title: 'AccountJobs' },
)

/** One job queue: its unfinished jobs, and the accounts holding most of them. */
export const JobQueueStatus = Type.Object(
  {
    queue: Type.String({ description: 'The job name, e.g. `email.delivery-events`' }),
    ready: Type.Integer({
      minimum: 0,
      description: 'Jobs that may run now (created, or failed and due again)',
    }),
    scheduled: Type.Integer({
      minimum: 0,
      description: "Jobs waiting for their time: scheduled for later, or waiting out a retry's delay",
    }),
    active: Type.Integer({ minimum: 0, description: 'Jobs running now, on every instance' }),
    top_waiting: Type.Array(AccountJobs, {
      description:
        'The accounts with most jobs ready or scheduled, most first, at most `top`; jobs of no account (platform ' +
        'work) are counted above but listed under none',
    }),
    top_active: Type.Array(AccountJobs, {
      description:
        "The accounts with most jobs running, most first, at most `top`: each holds at most its share of the queue's " +
        'workers (JOBS_ACCOUNT_SHARE_PERCENT)',
    }),
  },
  { title: 'JobQueue' },
)

export const JobQueues = Type.Object(
  {
    queues: Type.Array(JobQueueStatus, { description: 'Every job queue of the service, by name' }),
  },
  { title: 'JobQueues' },
)
