"""compose.yaml as shipped: every service that takes ``CRONLEDGER_SECRET_KEY`` requires it
(``${VAR:?message}``), so ``docker compose up`` without a key stops with a message saying how
to make one instead of starting with secrets disabled."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

COMPOSE = Path(__file__).resolve().parents[2] / "compose.yaml"
# Compose's interpolation forms used in compose.yaml: ${NAME}, ${NAME:-default}, ${NAME:?error}.
_VAR = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:-|:\?)(?P<arg>[^}]*))?\}")


class MissingVariable(Exception):
    pass


def interpolate(text: str, env: dict[str, str]) -> str:
    """What compose does to a value: ``:-`` substitutes when unset or empty, ``:?`` fails."""

    def one(match: re.Match[str]) -> str:
        value = env.get(match["name"], "")
        if value:
            return value
        if match["op"] == ":?":
            raise MissingVariable(f"required variable {match['name']} is missing a value: "
                                  f"{match['arg']}")
        return match["arg"] or ""

    return _VAR.sub(one, text)


def _services_with_key() -> dict[str, str]:
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    return {name: service["environment"]["CRONLEDGER_SECRET_KEY"]
            for name, service in services.items()
            if "CRONLEDGER_SECRET_KEY" in (service.get("environment") or {})}


def test_the_app_services_take_the_key() -> None:
    assert set(_services_with_key()) == {"migrate", "api", "worker"}


@pytest.mark.parametrize("service", ["migrate", "api", "worker"])
def test_every_service_requires_the_key(service: str) -> None:
    raw = _services_with_key()[service]
    match = _VAR.fullmatch(raw)
    assert match and match["name"] == "CRONLEDGER_SECRET_KEY" and match["op"] == ":?", raw
    assert "cronledger secrets new-key" in match["arg"]
    with pytest.raises(MissingVariable, match="secrets new-key"):
        interpolate(raw, {})
    with pytest.raises(MissingVariable):
        interpolate(raw, {"CRONLEDGER_SECRET_KEY": ""})
    assert interpolate(raw, {"CRONLEDGER_SECRET_KEY": "k"}) == "k"


def test_no_empty_default_anywhere() -> None:
    text = COMPOSE.read_text()
    assert re.findall(r"\$\{CRONLEDGER_SECRET_KEY(?!:\?)", text) == []
