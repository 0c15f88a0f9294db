import type { Database } from '../../platform/db/connection.js'
import { isId } from '../../platform/db/ids.js'
import { Invalid, NotFound } from '../../platform/http/errors.js'
import { isAccountServing } from '../accounts/accounts.service.js'
import { FUNNEL_NOT_FOUND, INVALID_FUNNEL_ID } from './funnel-access.service.js'
import { findLiveFunnelById, findStepsInOrder, findTagIds } from './preview.repository.js'
import type { FunnelPreview } from './preview.schemas.js'
import { stepView } from './steps.service.js'

/**
 * The public preview of a funnel, whatever its status (a draft is what one previews): its steps in order,
 * and no tracking code at all, so that a preview neither counts as a visit nor runs the owner's scripts.
 */
export async function previewFunnel(db: Database, funnelId: string): Promise<FunnelPreview> {
  if (!isId(funnelId)) throw new Invalid(INVALID_FUNNEL_ID)
  const funnel = await findLiveFunnelById(db, funnelId)
  // A removed account's funnel is answered as no funnel at all (its rows go later, table by table).
  if (!funnel || !(await isAccountServing(db, funnel.accountId, 'visit')))
    throw new NotFound(FUNNEL_NOT_FOUND)
  const steps = await findStepsInOrder(db, funnel.accountId, funnel.id)
  const tags = await findTagIds(db, funnel.accountId, funnel.id)
  return {
    _id: funnel.id,
    name: funnel.name,
    domain_id: funnel.domainId,
    base_path: funnel.basePath,
    status: funnel.status,
    ...(funnel.favicon !== null && { favicon: funnel.favicon }),
    tags,
    steps: steps.map((step) => ({ ...stepView(step), tracking_code: { header: '', footer: '' } })),
    header_tracking_code: '',
    footer_tracking_code: '',
    ...(funnel.liveChatWidget !== null && { live_chat_widget: funnel.liveChatWidget }),
    ...(funnel.category !== null && { category: funnel.category }),
    account_id: funnel.accountId,
    created_at: funnel.createdAt.toISOString(),
    updated_at: funnel.updatedAt.toISOString(),
    preview_mode: true,
  }
}
