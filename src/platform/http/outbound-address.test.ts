import { describe, expect, it } from 'vitest'
import { nonPublicKind, OutboundAddressPolicy, parseAddressRanges } from './outbound-address.js'

describe('outbound addresses', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['10.255.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.1', 'private'],
    ['100.100.100.200', 'shared (CGNAT)'],
    ['169.254.169.254', 'link-local'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fec0::1', 'link-local'],
    ['fd00:ec2::254', 'unique-local'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['192.0.0.192', 'reserved'],
    ['::7f00:1', 'reserved'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::', 'unspecified'],
    ['64:ff9b:1::1', 'reserved'],
  ])('finds %s non-public: %s', (address, kind) => {
    expect(nonPublicKind(address)).toBe(kind)
  })

  it.each([
    '8.8.8.8',
    '172.32.0.1',
    '100.128.0.1',
    '93.184.215.14',
    '::ffff:808:808',
    '64:ff9b::808:808',
    '2606:4700:4700::1111',
  ])('finds %s public', (address) => {
    expect(nonPublicKind(address)).toBeUndefined()
  })

  it('refuses localhost names as loopback whatever DNS says (RFC 6761), and checks other names once resolved', () => {
    const policy = new OutboundAddressPolicy([])
    for (const url of ['http://localhost:3000/', 'http://LOCALHOST./', 'http://hooks.localhost/'])
      expect(policy.refusalOfUrl(new URL(url))?.kind, url).toBe('loopback')
    expect(policy.refusalOfUrl(new URL('http://localhost.example.com/'))).toBeUndefined()
  })

  it('reads ranges and single addresses, refusing anything else naming it', () => {
    expect(parseAddressRanges('')).toEqual([])
    expect(parseAddressRanges('10.0.0.0/8,::1')).toEqual([
      { address: '10.0.0.0', prefix: 8, family: 'ipv4' },
      { address: '::1', prefix: 128, family: 'ipv6' },
    ])
    for (const entry of ['10.0.0.0/33', '::/129', '10.0.0.0/', '10.0.0.0/8/8', '10.0.0.0/-1', 'intranet'])
      expect(() => parseAddressRanges(entry), entry).toThrow(`"${entry}" is not an IP address or CIDR range`)
  })
})
