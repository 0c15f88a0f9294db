/**
 * Third-party apps need `leads.read` to read lead campaigns and their leads (and to hear `lead.created`),
 * `leads.write` to change them.
 */
export const LEADS_READ = { oauthScope: 'leads.read' } as const
export const LEADS_WRITE = { oauthScope: 'leads.write' } as const
