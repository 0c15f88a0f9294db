/**
 * The schema pg-boss 12 keeps its tables in. Not pg-boss's default `pgboss`: that one holds pg-boss 10's
 * tables where a previous release ran, which pg-boss 12 cannot migrate, and which that release's instances
 * go on using while a deploy replaces them (pg-boss-10.ts).
 */
export const JOBS_SCHEMA = 'jobs'
