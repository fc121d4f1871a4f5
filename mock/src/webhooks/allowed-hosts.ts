// The hosts deliveries may reach, in Gitea's `[webhook] ALLOWED_HOST_LIST` syntax (modules/hostmatcher).
import { BlockList, isIP } from 'node:net';

const familyOf = (address: string) => (isIP(address) === 6 ? 'ipv6' : 'ipv4');

function subnets(ranges: readonly string[]): BlockList {
  const list = new BlockList();
  for (const range of ranges) {
    const [address = '', prefix = ''] = range.split('/');
    if (isIP(address) === 0 || !/^\d{1,3}$/.test(prefix) || Number(prefix) > (isIP(address) === 6 ? 128 : 32))
      throw new Error(`"${range}" is no CIDR range, such as 10.0.0.0/8 or fd00::/8`);
    list.addSubnet(address, Number(prefix), familyOf(address));
  }
  return list;
}

const LOOPBACK = ['127.0.0.0/8', '::1/128'];
const PRIVATE = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'];
/** `external` is global unicast (Go's `IsGlobalUnicast` refuses the others) and not private. */
const NOT_EXTERNAL = subnets([
  ...PRIVATE,
  ...'0.0.0.0/8 127.0.0.0/8 169.254.0.0/16 224.0.0.0/4 255.255.255.255/32 ::/128 ::1/128 fe80::/10 ff00::/8'.split(' '),
]);
const KEYWORDS = ['*', 'loopback', 'private', 'external'];

function pattern(glob: string): RegExp {
  const escaped = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${escaped.replaceAll('*', '.*').replaceAll('?', '.')}$`, 'i');
}

/** Parses an allowed-host list; `name` allows a host name (or literal address) itself, `address` a resolved one. */
export function hostMatcher(list: string) {
  const items = list
    .split(',')
    .map((raw) => raw.trim().toLowerCase())
    .filter((item) => item !== '');
  const has = (item: string): boolean => items.includes(item);
  const ranges = items.filter((item) => item.includes('/'));
  const allowed = subnets([...ranges, ...(has('loopback') ? LOOPBACK : []), ...(has('private') ? PRIVATE : [])]);
  const patterns = items.filter((item) => !KEYWORDS.includes(item) && !item.includes('/')).map(pattern);
  const address = (text: string): boolean => {
    // An IPv4-mapped IPv6 address is the IPv4 address, as Go compares them.
    const ip = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(text)?.[1] ?? text;
    if (has('*')) return true;
    if (isIP(ip) === 0) return false;
    return allowed.check(ip, familyOf(ip)) || (has('external') && !NOT_EXTERNAL.check(ip, familyOf(ip)));
  };
  return {
    list,
    name: (host: string): boolean => {
      const bare = host.replace(/^\[(.*)\]$/, '$1');
      return has('*') || patterns.some((each) => each.test(bare)) || (isIP(bare) !== 0 && address(bare));
    },
    address,
  };
}
