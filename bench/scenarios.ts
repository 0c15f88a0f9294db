import type { Scenario } from './scenario.js'
import { appWebhooks } from './scenarios/app-webhooks.js'
import { changelog } from './scenarios/changelog.js'
import { contactsOAuth } from './scenarios/contacts-oauth.js'
import { deliveryEvents } from './scenarios/delivery-events.js'
import { edgeStep } from './scenarios/edge-step.js'
import { formSubmit } from './scenarios/form-submit.js'
import { leadWebhooks } from './scenarios/lead-webhooks.js'
import { neighbours } from './scenarios/neighbours.js'
import { oauthToken } from './scenarios/oauth-token.js'
import { reviewWebhooks } from './scenarios/review-webhooks.js'
import { roomList, roomSearch, roomSend } from './scenarios/rooms.js'
import { sockets } from './scenarios/sockets.js'

/** Every scenario `npm run bench -- <name>` knows: one file under scenarios/ and one line here each. */
export const scenarios: Record<string, Scenario> = {
  'app-webhooks': appWebhooks,
  changelog,
  'contacts-oauth': contactsOAuth,
  'delivery-events': deliveryEvents,
  'form-submit': formSubmit,
  'edge-step': edgeStep,
  'lead-webhooks': leadWebhooks,
  neighbours,
  'oauth-token': oauthToken,
  'review-webhooks': reviewWebhooks,
  'room-list': roomList,
  'room-search': roomSearch,
  'room-send': roomSend,
  sockets,
}
