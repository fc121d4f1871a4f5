// The hosts deliveries may reach, in Gitea's `[webhook] ALLOWED_HOST_LIST` syntax (modules/hostmatcher).
import { BlockList, isIP } from 'node:net';

const familyOf = (address: string) => (isIP(address) === 6 ? 'ipv6' : 'ipv4');

/** The ranges as one list; a malformed one is an Error that names it. */
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
const BUILTINS: Record<string, (address: string, family: 'ipv4' | 'ipv6') => boolean> = {
  loopback: (address, family) => LOOPBACK.check(address, family),
  private: (address, family) => PRIVATE.check(address, family),
  external: (address, family) => !NOT_GLOBAL.check(address, family) && !PRIVATE.check(address, family),
};

/** Parses an allowed-host list; `name` allows a host name (or literal address) itself, `address` a resolved one. */
export function hostMatcher(list: string) {
  const items = list
    .split(',')
    .map((raw) => raw.trim().toLowerCase())
    .filter((item) => item !== '');
  const anything = items.includes('*');
  const builtin = (item: string): boolean => Object.hasOwn(BUILTINS, item);
  const builtins = items.filter(builtin).map((item) => BUILTINS[item]!);
  const custom = subnets(items.filter((item) => item.includes('/')));
  // `*` any run of characters, `?` one.
  const patterns = items
    .filter((item) => item !== '*' && !builtin(item) && !item.includes('/'))
    .map(
      (glob) =>
        new RegExp(
          `^${glob
            .replace(/[.+^${}()|[\]\\]/g, '\\$&')
            .replace(/\*/g, '.*')
            .replace(/\?/g, '.')}$`,
          'i',
        ),
    );
  const address = (text: string): boolean => {
    // An IPv4-mapped IPv6 address is the IPv4 address, as Go compares them.
    const ip = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(text)?.[1] ?? text;
    if (anything) return true;
    if (isIP(ip) === 0) return false;
    return builtins.some((allows) => allows(ip, familyOf(ip))) || custom.check(ip, familyOf(ip));
  };
  return {
    /** The list as given, for messages. */
    list,
    name: (host: string): boolean => {
      const bare = host.replace(/^\[(.*)\]$/, '$1');
      return anything || patterns.some((each) => each.test(bare)) || (isIP(bare) !== 0 && address(bare));
    },
    address,
  };
}
