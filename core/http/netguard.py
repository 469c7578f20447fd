"""Refusing private network targets (``CRONLEDGER_BLOCK_PRIVATE_TARGETS``, docs/operations.md,
"Outbound requests").

For multi-tenant hosting a job must not reach the host's own network: loopback, private,
link-local (which holds the cloud metadata endpoints, ``169.254.169.254``), unique-local, CGNAT,
multicast, unspecified and reserved addresses are refused. The check runs **at send time on
the addresses the connection will use**: host names are checked on the resolver's answer (a
wrapper around aiohttp's resolver, so a DNS record that changes between validation and use —
DNS rebinding — cannot slip through; the connector only ever connects to addresses this
resolver returned), and IP literals, which aiohttp does not pass to the resolver, are checked
when the request starts. IPv4 addresses embedded in IPv6 (mapped, 6to4, NAT64, Teredo) are
checked as the IPv4 address they reach.
"""

from __future__ import annotations

import ipaddress
import socket

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver

# Cloud metadata services outside the link-local range (which is refused as a whole).
METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in (
    "100.100.100.200",  # Alibaba Cloud
    "fd00:ec2::254",  # AWS IMDS over IPv6
))
_NAT64 = ipaddress.ip_network("64:ff9b::/96")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class BlockedTarget(Exception):
    """The request was refused: its target is on a private or special-purpose network."""


def _embedded_ipv4(addr: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if addr.ipv4_mapped is not None:
        return addr.ipv4_mapped
    if addr.sixtofour is not None:
        return addr.sixtofour
    if addr.teredo is not None:
        return addr.teredo[1]
    if addr in _NAT64:
        return ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)
    return None


def blocked_reason(ip: str) -> str | None:
    """Why the address ``ip`` is refused (e.g. ``"loopback"``), or ``None`` when it is public.

    Unparseable text is refused too (``"unparseable"``): the connector would not use it as given.
    """
    try:
        addr: IPAddress = ipaddress.ip_address(ip.split("%", 1)[0])  # drop an IPv6 zone id
    except ValueError:
        return "unparseable"
    if isinstance(addr, ipaddress.IPv6Address):
        inner = _embedded_ipv4(addr)
        if inner is not None:
            addr = inner
    if addr in METADATA_ADDRESSES:
        return "cloud metadata"
    for reason, flag in (("unspecified", addr.is_unspecified), ("loopback", addr.is_loopback),
                         ("link-local", addr.is_link_local), ("multicast", addr.is_multicast),
                         ("private", addr.is_private), ("reserved", addr.is_reserved)):
        if flag:
            return reason
    if not addr.is_global:
        return "non-public"
    return None


def check_literal(host: str) -> None:
    """Refuse ``host`` when it is an IP literal of a blocked network; names pass (the resolver
    checks them).

    Raises:
        BlockedTarget: naming the address and why.
    """
    text = host.strip("[]")
    try:
        ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return
    reason = blocked_reason(text)
    if reason:
        raise BlockedTarget(f"refused: {text} is a {reason} address "
                            "(CRONLEDGER_BLOCK_PRIVATE_TARGETS is on)")


class GuardedResolver(AbstractResolver):
    """aiohttp resolver that refuses a name when any address it resolves to is blocked.

    Refusing the whole answer (rather than dropping the private addresses) keeps the rule
    simple to state and audit: a name that points into a private network is never used.

    Args:
        inner: the resolver doing the lookups (aiohttp's default when ``None``; create this
            inside the running event loop).
    """

    def __init__(self, inner: AbstractResolver | None = None) -> None:
        self.inner = inner if inner is not None else DefaultResolver()

    async def resolve(self, host: str, port: int = 0,
                      family: socket.AddressFamily = socket.AF_INET) -> list[ResolveResult]:
        results = await self.inner.resolve(host, port, family)
        for result in results:
            reason = blocked_reason(result["host"])
            if reason:
                raise BlockedTarget(f"refused: {host} resolves to {result['host']}, a {reason} "
                                    "address (CRONLEDGER_BLOCK_PRIVATE_TARGETS is on)")
        return results

    async def close(self) -> None:
        await self.inner.close()

