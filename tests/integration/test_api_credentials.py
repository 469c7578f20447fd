"""How ``/v1`` reads credentials and what its refusals say (api/deps.py:provide_actor,
api/errors.py): one ``Authorization: Bearer`` header, never a guess among several; ``Basic`` told
to use ``Bearer``; a pattern's refusal in words, not as its regex."""

from __future__ import annotations

from litestar.testing import AsyncTestClient

from tests.teams import Team


async def test_two_authorization_headers_are_a_400(api: AsyncTestClient,
                                                   team: Team) -> None:
    bearer = f"Bearer {team.write}"
    for headers in ([("Authorization", bearer), ("Authorization", bearer)],
                    [("Authorization", bearer), ("Authorization", "Bearer nope")],
                    [("Authorization", f"{bearer}, Bearer nope")]):
        r = await api.get("/v1/monitors", headers=headers)
        assert r.status_code == 400, headers
        assert r.json()["detail"] == "2 Authorization headers: send one, Authorization: " \
                                     "Bearer <key>"
    assert (await api.get("/v1/monitors", headers=[("Authorization", bearer)])
            ).status_code == 200


async def test_basic_is_told_to_use_bearer(api: AsyncTestClient, team: Team) -> None:
    r = await api.get("/v1/monitors", headers={"Authorization": f"Basic {team.write}"})
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    assert "Basic authentication is not accepted" in r.json()["detail"]
    assert "Authorization: Bearer <key>" in r.json()["detail"]


async def test_a_bad_tag_says_what_a_tag_may_hold(api: AsyncTestClient,
                                                  team: Team) -> None:
    r = await api.post("/v1/monitors", json={"name": "t", "schedule": "1h",
                                             "tags": ["ok", "not ok"]}, headers=team.auth)
    assert r.status_code == 422
    assert r.json()["errors"] == [{"field": "tags.1", "message": (
        "must be a tag: 1 to 50 characters without spaces or blank-looking characters, / or *, "
        "control or invisible formatting characters")}]
    assert "regex" not in r.text
    # the document's pattern is the rule: what it refuses is refused, what it allows is taken
    for tag in ("a\x85b", "zero\u200bwidth", "soft\xadhyphen", "bom\ufeff", "tab\there",
                "nb\xa0sp", "\u2028"):
        r = await api.post("/v1/monitors", json={"name": "t", "schedule": "1h", "tags": [tag]},
                           headers=team.auth)
        assert r.status_code == 422 and r.json()["errors"][0]["field"] == "tags.0", tag
    for tag in ("café", "日本", "a-b_c.d:e", "\ue000"):
        r = await api.post("/v1/monitors", json={"name": f"t-{tag}", "schedule": "1h",
                                                 "tags": [tag]}, headers=team.auth)
        assert r.status_code == 201 and r.json()["tags"] == [tag], r.text
