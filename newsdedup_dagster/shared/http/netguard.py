"""Where a feed fetch may connect: globally routable addresses only, unless allowed.

A feed URL (or any redirect it sends) must not make this machine fetch from
itself, its network or a cloud metadata service. `AddressPolicy` decides on
*resolved addresses*, by an explicit table of non-public ranges
(`NON_PUBLIC_NETWORKS`, from the IANA special-purpose registries): loopback,
RFC 1918, link-local (169.254.169.254), CGNAT, multicast, documentation,
reserved and unspecified IPv4; IPv6 loopback, ULA, site-local, link-local,
multicast, anything outside 2000::/3, and IPv4 embedded in IPv6
(IPv4-mapped, NAT64, 6to4, Teredo) judged by the IPv4 inside. Named networks or host names can
be allowed for intranet feeds (and for tests on 127.0.0.1); the fetcher applies such a policy
only to the sources that say `allow_private: true`.

`GuardedBackend` is an httpcore network backend: every new TCP connection
resolves the host itself, checks every answer, and connects to the checked
address, so a second DNS answer cannot swap it (DNS rebinding). TLS is then
started by httpcore with the URL's host name, so certificates are verified
against the name, not the address. Pure: no Dagster, no environment reads.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass

import httpcore

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052 well-known prefix: the last 32 bits are IPv4

# Every range that is not a public Internet host address, with the reason given in a refusal. From
# the IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890) and the address-space
# registries, written out rather than taken from `ipaddress`' is_global/is_private, whose tables
# differ between Python versions (3.11 counts fec0::/10 and 192.0.0.8-10 as global). Embedded IPv4
# (IPv4-mapped, NAT64 64:ff9b::/96, 6to4, Teredo, IPv4-compatible) is judged by the IPv4 inside,
# before this table. The whole of 192.0.0.0/24 (IETF protocol assignments, incl. the PCP and TURN
# anycast addresses) and 2001::/23 are refused: protocol service addresses, never a feed's host.
NON_PUBLIC_NETWORKS: tuple[tuple[str, str, str], ...] = (
    # IPv4
    ("0.0.0.0/8", "unspecified", "RFC 791 'this network'"),
    ("10.0.0.0/8", "private network", "RFC 1918"),
    ("100.64.0.0/10", "carrier-grade NAT", "RFC 6598 shared address space"),
    ("127.0.0.0/8", "loopback", "RFC 1122"),
    ("169.254.0.0/16", "link-local", "RFC 3927 (cloud metadata services live here)"),
    ("172.16.0.0/12", "private network", "RFC 1918"),
    ("192.0.0.0/24", "IETF protocol assignment", "RFC 6890; 192.0.0.8 dummy (RFC 7600), .9 PCP, .10 TURN"),
    ("192.0.2.0/24", "documentation", "RFC 5737 TEST-NET-1"),
    ("192.88.99.0/24", "deprecated 6to4 relay anycast", "RFC 7526"),
    ("192.168.0.0/16", "private network", "RFC 1918"),
    ("198.18.0.0/15", "benchmarking", "RFC 2544"),
    ("198.51.100.0/24", "documentation", "RFC 5737 TEST-NET-2"),
    ("203.0.113.0/24", "documentation", "RFC 5737 TEST-NET-3"),
    ("224.0.0.0/4", "multicast", "RFC 5771"),
    ("240.0.0.0/4", "reserved", "RFC 1112; 255.255.255.255 limited broadcast, RFC 919"),
    # IPv6
    ("::/128", "unspecified", "RFC 4291"),
    ("::1/128", "loopback", "RFC 4291"),
    ("::/8", "reserved", "RFC 4291 (IPv4-compatible and -mapped addresses are judged by their IPv4)"),
    ("64:ff9b:1::/48", "local-use NAT64", "RFC 8215"),
    ("100::/64", "discard-only", "RFC 6666"),
    ("100:0:0:1::/64", "dummy prefix", "RFC 9780"),
    ("2001::/23", "IETF protocol assignment", "RFC 2928 (Teredo 2001::/32 is judged by its IPv4)"),
    ("2001:db8::/32", "documentation", "RFC 3849"),
    ("3fff::/20", "documentation", "RFC 9637"),
    ("5f00::/16", "segment-routing SID", "RFC 9602"),
    ("fc00::/7", "unique local (private network)", "RFC 4193"),
    ("fe80::/10", "link-local", "RFC 4291"),
    ("fec0::/10", "site-local (deprecated, private network)", "RFC 3879"),
    ("ff00::/8", "multicast", "RFC 4291"),
)
_NON_PUBLIC = tuple((ipaddress.ip_network(network), reason) for network, reason, _source in NON_PUBLIC_NETWORKS)
# IANA IPv6 Address Space: only 2000::/3 is allocated as global unicast.
_GLOBAL_UNICAST_V6 = ipaddress.ip_network("2000::/3")


class AddressRefused(Exception):
    """A destination the policy does not allow; never retried."""


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]  # (server, client): the client is where traffic ends up
    # IPv4-compatible ::a.b.c.d (deprecated, still routed by some stacks)
    if int(address) >> 32 == 0 and int(address) > 1:
        return ipaddress.IPv4Address(int(address))
    return None


def non_global_reason(address: IPAddress) -> str | None:
    """Why `address` is not a public Internet address, or None when it is."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = _embedded_ipv4(address)
        if inner is not None:
            reason = non_global_reason(inner)
            return f"{reason} (IPv4 {inner} inside IPv6)" if reason else None
        if address.scope_id:
            return "scoped IPv6 address"
    for network, reason in _NON_PUBLIC:
        if address.version == network.version and address in network:
            return reason
    if isinstance(address, ipaddress.IPv6Address) and address not in _GLOBAL_UNICAST_V6:
        return "not globally routable"
    return None


def _parse_allow_entry(entry: str) -> IPNetwork | str:
    entry = entry.strip()
    try:
        return ipaddress.ip_network(entry, strict=False)
    except ValueError:
        pass
    name = entry.lower().rstrip(".")
    if not name or any(ch in name for ch in "/:@ ") or (name.startswith("*") and not name.startswith("*.")):
        raise ValueError(f"not a network or host name: {entry!r}")
    return name


@dataclass(frozen=True)
class AddressPolicy:
    """Which destinations a fetch may connect to.

    `allowed_networks` (CIDR, e.g. 10.20.0.0/16 or 127.0.0.1/32) are allowed
    whatever they are; `allowed_hosts` are host names whose addresses are
    allowed whatever they resolve to (`*.corp.example` for all names below)."""

    allowed_networks: tuple[IPNetwork, ...] = ()
    allowed_hosts: tuple[str, ...] = ()
    # The policy of redirects to another origin than the feed's: public addresses only, whatever
    # is allowed (only the refusal's wording differs).
    redirect_target: bool = False
    # The policy of a source without `allow_private: true`: public addresses only, whatever the
    # deployment allows (only the refusal's wording differs).
    public_source: bool = False

    @classmethod
    def from_entries(cls, entries: Iterable[str]) -> AddressPolicy:
        networks: list[IPNetwork] = []
        hosts: list[str] = []
        for entry in entries:
            if not entry or not entry.strip():
                continue
            parsed = _parse_allow_entry(entry)
            (hosts if isinstance(parsed, str) else networks).append(parsed)
        return cls(tuple(networks), tuple(hosts))

    def host_allowed(self, host: str) -> bool:
        host = host.lower().rstrip(".")
        for allowed in self.allowed_hosts:
            if allowed.startswith("*."):
                if host.endswith(allowed[1:]):
                    return True
            elif host == allowed:
                return True
        return False

    def refusal(self, host: str, address: IPAddress) -> str | None:
        """None when connecting to `address` (resolved from `host`) is allowed, else why not."""
        reason = non_global_reason(address)
        if reason is None:
            return None
        if self.host_allowed(host):
            return None
        plain = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped else None
        for network in self.allowed_networks:
            if address in network or (plain is not None and plain in network):
                return None
        shown = f"{host} ({address})" if host != str(address) else str(address)
        if self.redirect_target:
            return (f"refused to connect to {shown}: {reason} address; a redirect to another origin than the "
                    "feed's never enters a private network, not even one NEWSDEDUP_FETCH_ALLOW_PRIVATE allows")
        if self.public_source:
            return (f"refused to connect to {shown}: {reason} address (an intranet feed needs "
                    "`allow_private: true` on its entry in the sources file and its network in "
                    "NEWSDEDUP_FETCH_ALLOW_PRIVATE)")
        return (f"refused to connect to {shown}: {reason} address "
                "(allow it with NEWSDEDUP_FETCH_ALLOW_PRIVATE if this is an intranet feed)")


async def resolve(host: str, port: int) -> list[IPAddress]:
    """All addresses `host` resolves to (an IP literal resolves to itself)."""
    literal = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        return [ipaddress.ip_address(literal)]
    except ValueError:
        pass
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(literal, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    except socket.gaierror as exc:
        raise httpcore.ConnectError(f"cannot resolve {host}: {exc.strerror or exc}") from exc
    addresses: list[IPAddress] = []
    for family, _type, _proto, _canon, sockaddr in infos:
        if family not in (socket.AF_INET, socket.AF_INET6):
            continue
        address = ipaddress.ip_address(sockaddr[0].split("%", 1)[0])
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise httpcore.ConnectError(f"cannot resolve {host}: no IPv4/IPv6 address")
    return addresses


async def checked_addresses(host: str, port: int, policy: AddressPolicy) -> list[IPAddress]:
    """The addresses of `host` we may connect to. Refuses the host when any of
    its answers is refused: a name that mixes public and private answers is
    not a feed we want to reach by luck of the draw."""
    addresses = await resolve(host, port)
    for address in addresses:
        refusal = policy.refusal(host, address)
        if refusal:
            raise AddressRefused(refusal)
    return addresses


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """httpcore network backend that connects only to checked addresses."""

    def __init__(self, policy: AddressPolicy, inner: httpcore.AsyncNetworkBackend | None = None):
        self.policy = policy
        self.inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                          socket_options: Iterable | None = None) -> httpcore.AsyncNetworkStream:
        try:
            async with asyncio.timeout(timeout):
                addresses = await checked_addresses(host, port, self.policy)
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(f"resolving {host} took longer than {timeout:g}s") from exc
        last_error: Exception | None = None
        for address in addresses:  # happy-eyeballs lite: the next answer when one fails to connect
            try:
                return await self.inner.connect_tcp(str(address), port, timeout=timeout, local_address=local_address,
                                                    socket_options=socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last_error = exc
        assert last_error is not None
        raise last_error

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable | None = None) -> httpcore.AsyncNetworkStream:
        raise AddressRefused("unix sockets are never used for feeds")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)
