import { describe, expect, it } from 'vitest'
import { splitAddresses } from './inbound.service.js'
import {
  angleIds,
  decodeEncodedWords,
  decodeField,
  parseHeaders,
  parseSender,
} from './inbound-parse.service.js'

describe('inbound email parsing', () => {
  it('reads header values case-insensitively, unfolding continuation lines', () => {
    const headers = parseHeaders(
      'Message-Id: <m1@x.example>\r\nreferences: <a@x>\r\n\t<b@x>\r\nIN-REPLY-TO: <b@x>\r\nX-Empty:\r\n',
    )
    expect(angleIds(headers.get('message-id')?.[0])).toEqual(['m1@x.example'])
    expect(angleIds(headers.get('references')?.[0])).toEqual(['a@x', 'b@x'])
    expect(angleIds(headers.get('in-reply-to')?.[0])).toEqual(['b@x'])
    expect(headers.get('x-empty')).toEqual([''])
    expect(angleIds('no brackets here')).toEqual([])
  })

  it('takes the sender from the angle brackets, else the whole value, and the name before them', () => {
    expect(parseSender('"Jane Doe" <jane@example.com>')).toEqual({
      email: 'jane@example.com',
      name: 'Jane Doe',
    })
    expect(parseSender("'Ann' <ann@example.com>")).toEqual({ email: 'ann@example.com', name: 'Ann' })
    expect(parseSender('<bare@example.com>')).toEqual({ email: 'bare@example.com', name: '' })
    expect(parseSender(' plain@example.com ')).toEqual({ email: 'plain@example.com', name: '' })
    expect(parseSender('=?UTF-8?B?Sm9zw6k=?= <jose@example.com>')).toEqual({
      email: 'jose@example.com',
      name: 'Jos\u00e9',
    })
  })

  it('decodes RFC 2047 words and fields in their charset, UTF-8 for an unknown one', async () => {
    expect(decodeEncodedWords('=?ISO-8859-1?Q?R=E9ponse_=E0?= =?utf-8?q?_vous?=')).toBe(
      'R\u00e9ponse \u00e0 vous',
    )
    expect(await decodeField(Buffer.from([0x80, 0x20, 0x93, 0x41, 0x94]), 'windows-1252')).toBe(
      '\u20ac \u201cA\u201d',
    )
    expect(await decodeField(Buffer.from([0xa1, 0xe9]), 'iso-8859-2')).toBe('\u0104\u00e9')
    expect(await decodeField(Buffer.from('caf\u00e9'), 'x-unknown-charset')).toBe('caf\u00e9')
    expect(await decodeField(undefined, 'utf-8')).toBe('')
  })

  it('decodes a field of many megabytes a slice at a time, characters cut by a slice kept whole', async () => {
    const megabyte = 1024 * 1024
    // A three-byte character and a curly quote across each slice's end.
    const utf8 = Buffer.concat([
      Buffer.alloc(megabyte - 1, 'a'),
      Buffer.from('\u20ac'),
      Buffer.alloc(megabyte, 'b'),
    ])
    expect(await decodeField(utf8, 'utf-8')).toBe(`${'a'.repeat(megabyte - 1)}\u20ac${'b'.repeat(megabyte)}`)
    const cp1252 = Buffer.concat([
      Buffer.alloc(megabyte - 1, 0x41),
      Buffer.from([0x93, 0x94]),
      Buffer.alloc(10, 0x42),
    ])
    expect(await decodeField(cp1252, 'windows-1252')).toBe(
      `${'A'.repeat(megabyte - 1)}\u201c\u201d${'B'.repeat(10)}`,
    )
  })

  it('splits address lists on commas outside quotes and brackets', () => {
    expect(splitAddresses('"Lima, Ana" <ana@x.example>, bob@x.example,, <c,d@x>')).toEqual([
      '"Lima, Ana" <ana@x.example>',
      'bob@x.example',
      '<c,d@x>',
    ])
    expect(splitAddresses('')).toEqual([])
  })
})
