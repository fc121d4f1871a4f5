// The allowed hosts of the sandbox's deliveries, in the syntax of Gitea's ALLOWED_HOST_LIST:
// each class of address, CIDR ranges, name patterns, and IPv4-mapped IPv6 addresses seen as the
// IPv4 address they carry, as Go sees them.
import { describe, expect, it } from 'vitest';
import { hostMatcher } from './support/mock-internals.js';

describe('hostMatcher', () => {
  it('loopback, the default of the sandbox, allows 127.0.0.0/8 and ::1 only', () => {
    const loopback = hostMatcher('loopback');
    for (const address of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1'])
      expect(loopback.address(address), address).toBe(true);
    for (const address of ['10.0.0.1', '192.168.1.1', '93.184.216.34', '::', '0.0.0.0', 'fd00::1', 'not an address'])
      expect(loopback.address(address), address).toBe(false);
    // A name is allowed through the addresses it resolves to, not by itself.
    expect([loopback.name('localhost'), loopback.name('127.0.0.1'), loopback.name('[::1]')]).toEqual([
      false,
      true,
      true,
    ]);
  });

  it('private and external, as Go classes addresses', () => {
    const privateOnly = hostMatcher('private');
    for (const address of ['10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.0.1', 'fd12::1', '::ffff:10.0.0.1'])
      expect(privateOnly.address(address), address).toBe(true);
    for (const address of ['172.32.0.1', '127.0.0.1', '8.8.8.8'])
      expect(privateOnly.address(address), address).toBe(false);
    const external = hostMatcher('external');
    for (const address of ['8.8.8.8', '2001:db8::1', '93.184.216.34'])
      expect(external.address(address), address).toBe(true);
    for (const address of ['127.0.0.1', '10.0.0.1', '169.254.169.254', 'fe80::1', '224.0.0.1', '0.0.0.0', '::1'])
      expect(external.address(address), address).toBe(false);
  });

  it('CIDR ranges, name patterns and *, in a comma-separated list of any case', () => {
    const list = hostMatcher(' Loopback , 10.20.0.0/16, fd00::/8, *.CI.example.net, hooks?.example.org ');
    expect(['127.0.0.1', '10.20.30.40', 'fd00::5'].map(list.address)).toEqual([true, true, true]);
    expect(['10.21.0.1', 'fe00::5'].map(list.address)).toEqual([false, false]);
    expect(
      ['runner.ci.example.net', 'hooks1.example.org', 'ci.example.net', 'hooks12.example.org'].map(list.name),
    ).toEqual([true, true, false, false]);
    const anything = hostMatcher('*');
    expect([anything.address('8.8.8.8'), anything.name('gitea.example.org')]).toEqual([true, true]);
  });

  it('refuses a CIDR range that is none, naming it', () => {
    for (const bad of ['10.0.0.0/33', '10.0.0/8', 'fd00::/129', 'x/8'])
      expect(() => hostMatcher(`loopback,${bad}`), bad).toThrow(`"${bad}" is no CIDR range`);
  });
});
