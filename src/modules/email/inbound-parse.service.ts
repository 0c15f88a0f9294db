import { setImmediate as nextTurn } from 'node:timers/promises'
import type { AddressObject } from 'mailparser'
import { Invalid } from '../../platform/http/errors.js'

/** SendGrid's Inbound Parse posts messages of up to 30 MB. */
export const INBOUND_BODY_LIMIT = 30 * 1024 * 1024
/**
 * The same fields as JSON come from a relay or a test, never from SendGrid, and carry no files: the
 * service's usual limit. 30 MB of JSON would cost the parser seconds (docs/decisions.md).
 */
export const INBOUND_JSON_BODY_LIMIT = 1024 * 1024

export interface InboundAttachment {
  filename: string
  type: string
  data: Buffer
}

/** A reply as SendGrid's Inbound Parse posts it (the parsed or the raw form), its text fields decoded. */
export interface InboundEmail {
  headers: string
  from: string
  to: string
  cc: string
  subject: string
  text: string
  html: string
  envelope: { from?: string; to?: string[] } | null
  attachments: InboundAttachment[]
}

const TEXT_FIELDS = ['headers', 'from', 'to', 'cc', 'subject', 'text', 'html'] as const

/**
 * The same fields posted as a JSON object (no files): SendGrid posts multipart, but a relay or a test
 * may post JSON. Values are Unicode already, so `charsets` does not apply; objects are JSON text.
 */
export function readInboundJson(body: unknown): Promise<InboundEmail> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new Invalid('The body must be multipart/form-data or a JSON object')
  }
  const fields = new Map<string, Buffer>()
  for (const [name, value] of Object.entries(body)) {
    if (name === 'charsets' || value === null || value === undefined) continue
    fields.set(name, Buffer.from(typeof value === 'string' ? value : JSON.stringify(value), 'utf8'))
  }
  return parseInboundForm(fields, new Map())
}

/**
 * The reply from the form's fields, as the bytes posted (SendGrid puts no charset on the parts; the
 * `charsets` field names each field's), and its files: the raw MIME message when `email` holds one.
 */
export async function parseInboundForm(
  fields: Map<string, Buffer>,
  files: Map<string, InboundAttachment>,
): Promise<InboundEmail> {
  const raw = fields.get('email')
  if (raw?.length) return fromRawMessage(raw, jsonField(fields, 'envelope') as InboundEmail['envelope'])
  const charsets = jsonField(fields, 'charsets') as Record<string, unknown> | null
  const decoded = {} as Record<(typeof TEXT_FIELDS)[number], string>
  for (const name of TEXT_FIELDS) decoded[name] = await decodeField(fields.get(name), charsets?.[name])
  if (!decoded.from.trim()) throw new Invalid('from is required')
  const envelope = jsonField(fields, 'envelope') as InboundEmail['envelope']
  const info = (jsonField(fields, 'attachment-info') ?? {}) as Record<string, Record<string, unknown>>
  return {
    ...decoded,
    subject: decodeEncodedWords(decoded.subject),
    envelope,
    attachments: [...files.entries()]
      .filter(([name]) => /^attachment\d+$/.test(name))
      .sort(([a], [b]) => Number(a.slice(10)) - Number(b.slice(10)))
      .map(([name, file]) => ({
        filename: stringOr(info[name]?.filename, file.filename) || name,
        type: stringOr(info[name]?.type, file.type) || 'application/octet-stream',
        data: file.data,
      })),
  }
}

/**
 * The "send raw" form: the whole message is in `email` (SendGrid's `from`, `to` and `subject` fields
 * beside it are copies of its headers), so its own MIME headers say how each part is encoded.
 */
async function fromRawMessage(message: Buffer, envelope: InboundEmail['envelope']): Promise<InboundEmail> {
  // As the parsed form posts them: each part as sent, no text made from HTML or HTML from text, and
  // `cid:` links left pointing at the attachments instead of copying images into the HTML.
  // Loaded on the first raw message: the parser and its HTML tools are large, and most mail comes parsed.
  const { simpleParser } = await import('mailparser')
  const parsed = await simpleParser(message, {
    skipHtmlToText: true,
    skipTextToHtml: true,
    keepCidLinks: true,
  }).catch(() => undefined) // on a message it cannot split or decode, e.g. a header block past 1 MB
  // Text with no header at all parses as a bare body; it is no message either.
  if (!parsed || parsed.headers.size === 0) throw new Invalid('email must be a MIME message')
  const from = parsed.from?.text ?? ''
  if (!from.trim()) throw new Invalid('from is required')
  const end = message.toString('latin1').search(/\r?\n\r?\n/)
  return {
    // The header block (RFC 5322 2.1), read as UTF-8 as RFC 6532 allows in header values.
    headers: message.subarray(0, end < 0 ? message.length : end).toString('utf8'),
    from,
    to: addressText(parsed.to),
    cc: addressText(parsed.cc),
    subject: parsed.subject ?? '',
    text: parsed.text ?? '',
    html: parsed.html || '',
    envelope,
    attachments: parsed.attachments.map((file, i) => ({
      filename: file.filename || `attachment${i + 1}`,
      type: file.contentType || 'application/octet-stream',
      data: file.content,
    })),
  }
}

/** One `To` or `Cc` header's addresses, or every such header's when the message repeats it. */
const addressText = (value: AddressObject | AddressObject[] | undefined) =>
  [value ?? []]
    .flat()
    .map((list) => list.text)
    .join(', ')

/**
 * A field of up to 30 MB is decoded a slice per turn of the event loop: in one go, its decoding holds the
 * loop for tens of milliseconds (a second for windows-1252 mapped byte by byte), and other requests wait.
 */
const SLICE_BYTES = 1024 * 1024

/** The field's bytes decoded with the charset SendGrid named for it; UTF-8 when none or unknown. */
export async function decodeField(bytes: Buffer | undefined, charset: unknown): Promise<string> {
  if (!bytes) return ''
  const decode = charsetDecoder(charset)
  let text = ''
  for (let at = 0; at < bytes.length; at += SLICE_BYTES) {
    if (at > 0) await nextTurn()
    const end = Math.min(at + SLICE_BYTES, bytes.length)
    text += decode(bytes.subarray(at, end), end < bytes.length)
  }
  return text
}

/** Decodes bytes in the named charset, UTF-8 when none or unknown; `more` when the text goes on. */
function charsetDecoder(charset: unknown): (bytes: Uint8Array, more?: boolean) => string {
  const label = typeof charset === 'string' && charset.trim() ? charset.trim() : 'utf-8'
  const decoder = decoderFor(label)
  // Node 20 decodes windows-1252 (and iso-8859-1, its WHATWG alias) as plain Latin-1, turning Outlook's
  // euro signs and curly quotes (bytes 0x80-0x9F) into control characters; those are mapped here.
  if (decoder.encoding === 'windows-1252') {
    return (bytes, more) =>
      decoder
        .decode(bytes, { stream: more })
        .replace(C1_CONTROLS, (c) => WINDOWS_1252_HIGH[c.charCodeAt(0) - 0x80]!)
  }
  return (bytes, more) => decoder.decode(bytes, { stream: more })
}

const C1_CONTROLS = /[\x80-\x9f]/g

function decoderFor(label: string) {
  try {
    return new TextDecoder(label)
  } catch {
    // An unknown label (TextDecoder throws RangeError): UTF-8 keeps at least the ASCII text readable.
    return new TextDecoder('utf-8')
  }
}

/** Windows-1252 bytes 0x80-0x9F (the five undefined ones stay as their C1 control characters). */
const WINDOWS_1252_HIGH = [
  '\u20ac',
  '\u0081',
  '\u201a',
  '\u0192',
  '\u201e',
  '\u2026',
  '\u2020',
  '\u2021',
  '\u02c6',
  '\u2030',
  '\u0160',
  '\u2039',
  '\u0152',
  '\u008d',
  '\u017d',
  '\u008f',
  '\u0090',
  '\u2018',
  '\u2019',
  '\u201c',
  '\u201d',
  '\u2022',
  '\u2013',
  '\u2014',
  '\u02dc',
  '\u2122',
  '\u0161',
  '\u203a',
  '\u0153',
  '\u009d',
  '\u017e',
  '\u0178',
]

function jsonField(fields: Map<string, Buffer>, name: string): unknown {
  const bytes = fields.get(name)
  if (!bytes || bytes.length === 0) return null
  try {
    return JSON.parse(bytes.toString('utf8'))
  } catch {
    throw new Invalid(`${name} must be JSON`)
  }
}

const stringOr = (value: unknown, fallback: string) => (typeof value === 'string' && value ? value : fallback)

/** The header text as lower-case name -> values, continuation lines unfolded (RFC 5322 2.2.3). */
export function parseHeaders(raw: string): Map<string, string[]> {
  const headers = new Map<string, string[]>()
  for (const line of raw.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':')
    if (colon <= 0) continue
    const name = line.slice(0, colon).trim().toLowerCase()
    headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()])
  }
  return headers
}

/** The ids between angle brackets, in order (`References` holds several). */
export function angleIds(value: string | undefined): string[] {
  return [...(value ?? '').matchAll(/<([^<>\s]+)>/g)].map((m) => m[1] as string)
}

/** The address in angle brackets (else the whole value) and the name before them, quotes trimmed. */
export function parseSender(from: string): { email: string; name: string } {
  const match = /^(.*?)<([^<>]+)>/.exec(from)
  if (!match) return { email: from.trim(), name: '' }
  const name = (match[1] as string).trim().replace(/^["']+|["']+$/g, '')
  return { email: (match[2] as string).trim(), name: decodeEncodedWords(name.trim()) }
}

/** RFC 2047 encoded words (`=?charset?B|Q?...?=`), as mail clients write non-ASCII names and subjects. */
export function decodeEncodedWords(value: string): string {
  return value
    .replace(/(=\?[^?]+\?[BbQq]\?[^?]*\?=)\s+(?==\?)/g, '$1')
    .replace(
      /=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g,
      (_word, charset: string, encoding: string, data: string) => {
        const bytes =
          encoding.toUpperCase() === 'B'
            ? Buffer.from(data, 'base64')
            : Buffer.from(
                data
                  .replace(/_/g, ' ')
                  .replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) =>
                    String.fromCharCode(Number.parseInt(hex, 16)),
                  ),
                'latin1',
              )
        return charsetDecoder(charset.split('*')[0])(bytes)
      },
    )
}
