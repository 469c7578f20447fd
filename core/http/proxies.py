"""Which peers may say who the client is: ``CRONLEDGER_TRUSTED_PROXIES`` and ``X-Forwarded-For``.

The rules are uvicorn's (``--forwarded-allow-ips``, its ``ProxyHeadersMiddleware``), so one
setting means the same in both: a comma-separated list of IP addresses and CIDR networks, or
``*`` for every peer; the default is ``127.0.0.1,::1``. Only when the connection's peer is
trusted is ``X-Forwarded-For`` read, and the client is the right-most address in it that is not
itself a trusted proxy (each proxy appends the address it got the request from, so everything
left of that was written by the client and can be anything); when every entry is trusted, or
with ``*``, it is the left-most. Unlike uvicorn, an entry that is not an IP address (with an
optional port) makes the header count as absent: the peer address is used. See
docs/heartbeats.md ("Pinging").
"""

from __future__ import annotations

import functools
import ipaddress
from dataclasses import dataclass

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
DEFAULT = "127.0.0.1,::1"
MAX_HEADER = 4096  # characters of X-Forwarded-For looked at; a longer header is ignored


def _host(entry: str) -> str:
    """The host of one ``X-Forwarded-For`` entry: ``1.2.3.4``, ``1.2.3.4:80``, ``::1``,
    ``[::1]:80`` (uvicorn's ``_parse_host_port``, without the port)."""
    if entry.startswith("["):
        end = entry.find("]")
        return entry[1:end] if end != -1 else entry
    if entry.count(":") == 1:
        host, _, port = entry.partition(":")
        return host if port.isdigit() else entry
    return entry


def _address(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


@dataclass(frozen=True)
class TrustedProxies:
    """A parsed ``CRONLEDGER_TRUSTED_PROXIES``."""

    everyone: bool
    addresses: frozenset[IPAddress]
    networks: tuple[IPNetwork, ...]

    @classmethod
    def parse(cls, text: str) -> TrustedProxies:
        """Parse ``"10.0.0.1, 10.1.0.0/16, ::1"`` or ``"*"``.

        Raises:
            ValueError: an entry is neither an IP address nor a CIDR network (the message
                names it), or the list is empty.
        """
        items = [item.strip() for item in text.split(",") if item.strip()]
        if not items:
            raise ValueError("give IP addresses or CIDR networks separated by commas, or *")
        if "*" in items:
            return cls(True, frozenset(), ())
        addresses: set[IPAddress] = set()
        networks: list[IPNetwork] = []
        for item in items:
            try:
                if "/" in item:
                    networks.append(ipaddress.ip_network(item, strict=False))
                else:
                    addresses.add(ipaddress.ip_address(item))
            except ValueError:
                raise ValueError(f"{item[:64]!r} is not an IP address or a CIDR network "
                                 "(e.g. 10.0.0.0/8)") from None
        return cls(False, frozenset(addresses), tuple(networks))

    def trusts(self, host: str | None) -> bool:
        """Whether ``host`` (an address as text) is a trusted proxy (``*``: every peer)."""
        if self.everyone:
            return True
        address = _address(host) if host else None
        return address is not None and (
            address in self.addresses or any(address in net for net in self.networks))

    def client(self, peer: str | None, forwarded_for: str | None) -> str | None:
        """The client's address: from ``forwarded_for`` (all ``X-Forwarded-For`` headers joined
        by commas) when ``peer`` is trusted and the chosen entry is an IP address (returned
        normalised, without a port), else ``peer`` as given."""
        if not forwarded_for or len(forwarded_for) > MAX_HEADER or not self.trusts(peer):
            return peer
        entries = [_host(item.strip()) for item in forwarded_for.split(",")]
        chosen = entries[0]
        if not self.everyone:
            for entry in reversed(entries):
                if not self.trusts(entry):
                    chosen = entry
                    break
        address = _address(chosen)
        return str(address) if address is not None else peer


@functools.lru_cache(maxsize=8)
def trusted_proxies(text: str) -> TrustedProxies:
    """:meth:`TrustedProxies.parse`, cached: the ping route asks for every request.

    Raises:
        ValueError: as :meth:`TrustedProxies.parse`.
    """
    return TrustedProxies.parse(text)
