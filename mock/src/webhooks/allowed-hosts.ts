// The hosts deliveries may reach, in Gitea's `[webhook] ALLOWED_HOST_LIST` syntax (modules/hostmatcher):
// `loopback`, `private` (RFC 1918, unique local IPv6), `external` (other global unicast), `*`, CIDR
// ranges, and name patterns with `*` and `?`. A name is allowed when it matches a pattern or each
// address it resolves to is allowed. Gitea's default is `external`; the sandbox's is `loopback`: its
// receivers under test listen on 127.0.0.1, and it must not reach other machines unless told to.
import { BlockList, isIP } from 'node:net';

export interface HostMatcher {
  /** Whether the host name (or literal address) itself is allowed, without resolving it. */
  name(host: string): boolean;
  /** Whether a resolved address is allowed. */
  address(address: string): boolean;
  /** The list as given, for messages. */
  readonly list: string;
}

function subnets(ranges: readonly string[]): BlockList {
  const list = new BlockList();
  for (const range of ranges) {
    const [address = '', prefix = ''] = range.split('/');
    list.addSubnet(address, Number(prefix), isIP(address) === 6 ? 'ipv6' : 'ipv4');
  }
  return list;
}

const LOOPBACK = subnets(['127.0.0.0/8', '::1/128']);
const PRIVATE = subnets(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7']);
/** Go's `IsGlobalUnicast` refuses these; `external` is global unicast and not private. */
const NOT_GLOBAL = subnets([
  '0.0.0.0/8',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '224.0.0.0/4',
  '255.255.255.255/32',
  '::/128',
  '::1/128',
  'fe80::/10',
  'ff00::/8',
]);

/** `address` with an IPv4-mapped IPv6 address written as IPv4, as Go compares them. */
function plain(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return { address: mapped, family: 'ipv4' };
  return { address, family: isIP(address) === 6 ? 'ipv6' : 'ipv4' };
}

/** A host name pattern as a regular expression: `*` any run of characters, `?` one. */
function pattern(glob: string): RegExp {
  const source = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`, 'i');
}

/** Parses an allowed-host list; a malformed CIDR range is an Error that names it. */
export function hostMatcher(list: string): HostMatcher {
  const builtins = new Set<string>();
  const ranges: string[] = [];
  const patterns: RegExp[] = [];
  let anything = false;
  for (const raw of list.split(',')) {
    const item = raw.trim().toLowerCase();
    if (item === '') continue;
    if (item === '*') anything = true;
    else if (item === 'loopback' || item === 'private' || item === 'external') builtins.add(item);
    else if (item.includes('/')) {
      const [address = '', prefix = ''] = item.split('/');
      const bits = isIP(address) === 6 ? 128 : 32;
      if (isIP(address) === 0 || !/^\d{1,3}$/.test(prefix) || Number(prefix) > bits)
        throw new Error(`"${item}" is no CIDR range, such as 10.0.0.0/8 or fd00::/8`);
      ranges.push(item);
    } else patterns.push(pattern(item));
  }
  const custom = subnets(ranges);
  const address = (text: string): boolean => {
    if (anything) return true;
    const ip = plain(text);
    if (isIP(ip.address) === 0) return false;
    if (builtins.has('loopback') && LOOPBACK.check(ip.address, ip.family)) return true;
    if (builtins.has('private') && PRIVATE.check(ip.address, ip.family)) return true;
    if (builtins.has('external') && !NOT_GLOBAL.check(ip.address, ip.family) && !PRIVATE.check(ip.address, ip.family))
      return true;
    return custom.check(ip.address, ip.family);
  };
  return {
    list,
    name: (host) => {
      const bare = host.replace(/^\[(.*)\]$/, '$1');
      return anything || patterns.some((each) => each.test(bare)) || (isIP(bare) !== 0 && address(bare));
    },
    address,
  };
}
