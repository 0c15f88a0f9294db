/**
 * The longest Message-ID kept to recognise a redelivered reply (RFC 5322 sets none; mail clients write under
 * 100 characters): the unique index on the account's received ids holds it in any script. A longer one is
 * kept as no id.
 */
export const MESSAGE_ID_MAX_LENGTH = 500
