import { type LookupAddress, lookup as systemLookup } from 'node:dns'
import { BlockList, isIP, type LookupFunction } from 'node:net'

/** The `dispatcher` Node's fetch takes: an undici Agent. */
type FetchDispatcher = NonNullable<RequestInit['dispatcher']>

/** An address range as an operator writes it: `10.1.0.0/16`, `fd00::/8`, or one address. */
export interface AddressRange {
  address: string
  prefix: number
  family: 'ipv4' | 'ipv6'
}

/**
 * The special-purpose ranges of IANA's IPv4 and IPv6 registries (RFC 6890) that lead into the caller's own
 * host or network rather than onto the internet, by kind. Node's BlockList also matches an IPv4-mapped IPv6
 * address (`::ffff:127.0.0.1`) against the IPv4 ranges.
 */
const NON_PUBLIC_RANGES: Record<string, [string, number][]> = {
  // RFC 1122: "this host on this network"; Linux connects 0.0.0.0 to itself.
  unspecified: [
    ['0.0.0.0', 8],
    ['::', 128],
  ],
  loopback: [
    ['127.0.0.0', 8],
    ['::1', 128],
  ],
  // RFC 1918.
  private: [
    ['10.0.0.0', 8],
    ['172.16.0.0', 12],
    ['192.168.0.0', 16],
  ],
  // RFC 6598: carrier-grade NAT; Alibaba's metadata service is at 100.100.100.200.
  'shared (CGNAT)': [['100.64.0.0', 10]],
  // RFC 3927 and RFC 4291: the cloud metadata services (169.254.169.254, fd00:ec2::254 is unique-local).
  'link-local': [
    ['169.254.0.0', 16],
    ['fe80::', 10],
    // RFC 3879: the deprecated site-local block, still routed inside some networks.
    ['fec0::', 10],
  ],
  // RFC 4193.
  'unique-local': [['fc00::', 7]],
  multicast: [
    ['224.0.0.0', 4],
    ['ff00::', 8],
  ],
  // IETF protocol assignments (192.0.0.0/24), benchmarking (RFC 2544), the future-use block and broadcast,
  // IPv4-compatible IPv6 (RFC 4291, deprecated), discard-only (RFC 6666), local-use NAT64 (RFC 8215).
  reserved: [
    ['192.0.0.0', 24],
    ['198.18.0.0', 15],
    ['240.0.0.0', 4],
    ['::', 96],
    ['100::', 64],
    ['64:ff9b:1::', 48],
  ],
}

const familyOf = (address: string) => (isIP(address) === 4 ? 'ipv4' : 'ipv6')

const NON_PUBLIC = Object.entries(NON_PUBLIC_RANGES).map(([kind, ranges]) => {
  const list = new BlockList()
  for (const [address, prefix] of ranges) list.addSubnet(address, prefix, familyOf(address))
  return { kind, list }
})

/** RFC 6052's well-known NAT64 prefix: the address stands for the IPv4 address in its last 32 bits. */
const NAT64 = new BlockList()
NAT64.addSubnet('64:ff9b::', 96, 'ipv6')

/** The IPv4 address a NAT64 address translates to, as an IPv4-mapped IPv6 address BlockList compares. */
function nat64Target(address: string): string {
  const groups = address.split(':')
  const last = groups.at(-1) ?? ''
  if (last.includes('.')) return `::ffff:${last}`
  // Of the canonical text (URL and getaddrinfo write it), an empty group is a run of zeros.
  return `::ffff:${groups.at(-2) || '0'}:${last || '0'}`
}

/** The kind of non-public range `address` (an IP) lies in, or undefined for a public address. */
export function nonPublicKind(address: string): string | undefined {
  const family = familyOf(address)
  const checked = family === 'ipv6' && NAT64.check(address, 'ipv6') ? nat64Target(address) : address
  return NON_PUBLIC.find(({ list }) => list.check(checked, familyOf(checked)))?.kind
}

/** `10.1.0.0/16,fd00::/8, 203.0.113.7` as ranges; throws naming the first entry that is none. */
export function parseAddressRanges(text: string): AddressRange[] {
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const [address = '', prefixText, ...rest] = entry.split('/')
      const version = isIP(address)
      const bits = version === 4 ? 32 : 128
      const prefix = prefixText === undefined ? bits : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : -1
      if (version === 0 || rest.length > 0 || prefix < 0 || prefix > bits)
        throw new Error(`"${entry}" is not an IP address or CIDR range`)
      return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' }
    })
}

/** Why a call may not go where it was headed: the address, what it resolved from, and its kind. */
export class OutboundAddressRefused extends Error {
  constructor(
    address: string,
    readonly kind: string,
    hostname?: string,
  ) {
    const resolved = hostname && hostname !== address ? ` (resolved from ${hostname})` : ''
    super(`${address}${resolved} is not a public address (${kind})`)
  }
}

/** The refusal among an error's causes (fetch wraps a connection's error in its own), if any. */
export function outboundRefusalIn(error: unknown): OutboundAddressRefused | undefined {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof OutboundAddressRefused) return cause
  }
  return undefined
}

/** A URL's hostname as an IP address (without IPv6's brackets), or undefined for a name. */
function ipOfHostname(hostname: string): string | undefined {
  const bare = hostname.replace(/^\[(.*)\]$/, '$1')
  return isIP(bare) ? bare : undefined
}

/** RFC 6761 6.3: `localhost` and the names under it are the loopback interface, whatever DNS says. */
const isLocalhostName = (hostname: string) => /(^|\.)localhost\.?$/i.test(hostname)

/**
 * Where calls chosen by tenants or apps (their webhook URLs) may go: public addresses only, and the ranges
 * the operator allows. Server-side request forgery otherwise reaches the cloud metadata service, the
 * database or any internal service from inside the network.
 */
export class OutboundAddressPolicy {
  private readonly allowed = new BlockList()
  private agent: Promise<FetchDispatcher> | undefined

  /** `resolve`: how names are resolved (the system's resolver; tests give their own). */
  constructor(
    allowed: AddressRange[],
    private readonly resolve: LookupFunction = systemLookup,
  ) {
    for (const range of allowed) this.allowed.addSubnet(range.address, range.prefix, range.family)
  }

  /** The refusal of an IP address, or undefined when it may be reached. */
  refusalOf(address: string, hostname?: string): OutboundAddressRefused | undefined {
    if (this.allowed.check(address, familyOf(address))) return undefined
    const kind = nonPublicKind(address)
    return kind ? new OutboundAddressRefused(address, kind, hostname) : undefined
  }

  /**
   * The refusal of a URL by its host as written: an IP address (the URL parser has already turned 2130706433,
   * 0x7f.1 and 127.1 into 127.0.0.1) or a localhost name. Other names are checked once resolved.
   */
  refusalOfUrl(url: URL): OutboundAddressRefused | undefined {
    const address = ipOfHostname(url.hostname)
    if (address) return this.refusalOf(address)
    return isLocalhostName(url.hostname) ? this.refusalOf('127.0.0.1', url.hostname) : undefined
  }

  /**
   * A `lookup` for net.connect: resolves the name once, refuses the connection when any of its addresses is
   * refused, and hands back the checked addresses, so that the connection goes to what was checked and a
   * name cannot rebind in between.
   */
  checkedLookup(): LookupFunction {
    return (hostname, options, callback) => {
      this.resolve(hostname, { ...options, all: true }, (error, found) => {
        if (error) return callback(error, '', undefined)
        const addresses = found as LookupAddress[]
        const refusal = addresses
          .map(({ address }) => this.refusalOf(address, hostname))
          .find((refused) => refused !== undefined)
        if (refusal) return callback(refusal, '', undefined)
        if (options.all) return callback(null, addresses)
        const [first] = addresses as [LookupAddress]
        callback(null, first.address, first.family)
      })
    }
  }

  /**
   * An HTTP dispatcher (fetch's `dispatcher`) that connects only where the policy allows: a host given as
   * an address is checked as it is (a redirect's too), a name through `checkedLookup`. Made on first use:
   * loading undici takes about 90 ms, which a process that never calls out this way does not pay.
   */
  dispatcher(): Promise<FetchDispatcher> {
    this.agent ??= import('undici').then(({ Agent, buildConnector }) => {
      const connect = buildConnector({ lookup: this.checkedLookup() })
      const agent = new Agent({
        connect: (options, callback) => {
          const address = ipOfHostname(options.hostname)
          const refusal = address ? this.refusalOf(address) : undefined
          if (refusal) return callback(refusal, null)
          connect(options, callback)
        },
      })
      // The package's types and those of the copy inside Node differ (FormData's iterators), not the calls.
      return agent as unknown as FetchDispatcher
    })
    return this.agent
  }
}
