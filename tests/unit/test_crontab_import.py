"""``cronledger import crontab`` on real-world crontabs (tests/data/crontabs: Debian's
/etc/crontab, the examples of the crontab(5) man page) and on curl/wget lines."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.declarative.crontab import (
    CrontabRefused,
    http_request,
    import_crontab,
    looks_like_system,
)
from core.declarative.document import check_document, secret_warnings
from core.errors import FieldErrors
from core.schedule import InvalidSchedule, parse_schedule

DATA = Path(__file__).resolve().parent.parent / "data" / "crontabs"


def _read(name: str) -> str:
    return (DATA / name).read_text()


def test_debian_etc_crontab_is_system_format_and_becomes_four_monitors() -> None:
    text = _read("debian-etc-crontab")
    assert looks_like_system(text)
    imported = import_crontab(text)
    monitors = imported.document["monitors"]
    assert [m["schedule"] for m in monitors] == ["17 * * * *", "25 6 * * *", "47 6 * * 7",
                                                 "52 6 1 * *"]
    assert imported.document["jobs"] == []
    report = "\n".join(imported.report)
    assert "line 7: environment line kept here" in report and "SHELL=/bin/sh" in report
    assert "line 1: comment kept here: # /etc/crontab: system-wide crontab" in report
    # the rewritten line keeps the user column and pings on success
    assert ("17 * * * * root ( cd / && run-parts --report /etc/cron.hourly ) && "
            "curl -fsS -m 10 --retry 5 <ping url of cd-run-parts-report-etc-cron-hourly>"
            ) in report
    assert "/start ; ( cd / && run-parts --report /etc/cron.hourly ) ; curl" in report
    assert "/$?" in report
    errors = FieldErrors()
    check_document(imported.document, errors)
    assert errors.items == []


def test_crontab5_examples() -> None:
    text = _read("crontab5-example")
    assert not looks_like_system(text)
    imported = import_crontab(text)
    schedules = [m["schedule"] for m in imported.document["monitors"]]
    assert schedules == ["5 0 * * *", "15 14 1 * *", "0 22 * * 1-5", "23 0-23/2 * * *",
                         "5 4 * * sun", "0 */4 1 * mon", "0 0 */2 * sun", "0 4 8-14 * *"]
    report = "\n".join(imported.report)
    assert "MAILTO=paul" in report
    # % starts standard input: it stays after the rewritten command; \% stays escaped
    assert "mail -s \"It's 10pm\" joe && curl" in report and "%Joe,%%Where are your kids?%" \
        in report
    assert "test $(date +\\%u) -eq 6" in report
    names = [m["name"] for m in imported.document["monitors"]]
    assert len(names) == len(set(names))


def test_crontab5_system_example() -> None:
    imported = import_crontab(_read("crontab5-system-example"))
    assert len(imported.document["monitors"]) == 4
    assert "PATH=/usr/local/sbin" in "\n".join(imported.report)


def test_http_lines_become_jobs_with_zones_and_secrets_as_placeholders() -> None:
    imported = import_crontab(_read("http-user-crontab"))
    jobs = {j["name"]: j for j in imported.document["jobs"]}
    heartbeat = jobs["status-example-com-heartbeat"]
    assert heartbeat["timezone"] == "Europe/Paris"  # CRON_TZ=
    assert heartbeat["timeout_seconds"] == 20.0 and heartbeat["retry"] == {"attempts": 3}
    report = jobs["api-example-com-v1-reports"]["request"]
    assert report["method"] == "POST" and report["body"] == '{"report":"daily"}'
    assert report["headers"] == {
        "Authorization": "Bearer ${secrets.API_EXAMPLE_COM_V1_REPORTS_AUTHORIZATION}",
        "Content-Type": "application/json"}
    sync = jobs["sync-example-com-run"]
    assert sync["schedule"] == "0 * * * *" and sync["timezone"] == "America/New_York"  # TZ=
    assert sync["request"]["method"] == "PUT" and sync["request"]["body"] == "sync"
    legacy = jobs["legacy-example-com-cleanup"]["request"]["url"]
    assert legacy.startswith("https://${secrets.LEGACY_EXAMPLE_COM_CLEANUP_USER}:")
    assert "hunter2" not in str(imported.document) and "s3cr3t" not in str(imported.document)
    assert [m["schedule"] for m in imported.document["monitors"]] == ["0 0 * * *"]  # @daily
    assert any("@reboot is not supported" in line for line in imported.report)
    assert imported.secrets[0] == "API_EXAMPLE_COM_V1_REPORTS_AUTHORIZATION"
    assert secret_warnings(imported.document) == []


def test_curl_and_wget_parsing() -> None:
    assert http_request("curl -fsS https://a/b >/dev/null 2>&1") == {
        "method": "GET", "url": "https://a/b", "headers": {}, "body": None}
    posted = http_request('curl -sX PATCH -H "A: 1" --data-raw x -d y example.com/p')
    assert posted is not None and (posted["method"], posted["url"], posted["body"]) == (
        "PATCH", "http://example.com/p", "x&y")
    assert http_request("curl -d a=1 https://a/")["method"] == "POST"  # type: ignore[index]
    as_json = http_request("""curl --json '{"a":1}' https://a/""")
    assert as_json is not None and as_json["headers"]["Content-Type"] == "application/json"
    wget = http_request("wget -qO- --header='X: y' --post-data=q https://w/z")
    assert wget is not None and (wget["method"], wget["headers"], wget["body"]) == (
        "POST", {"X": "y"}, "q")
    assert http_request("cd / && curl https://a/") is None  # two commands: a monitor
    assert http_request("curl https://a/ | sh") is None
    assert http_request("curl --unknown-flag https://a/") is None
    # one short flag alone is a flag too, as in -fsS (it was refused as an unknown option)
    for flags in ("-s", "-f -s -S", "-L", "-k -s -m 10"):
        assert http_request(f"curl {flags} https://a/b")["url"] == "https://a/b", flags  # type: ignore[index]
    assert http_request("curl -z https://a/") is None
    assert http_request("/usr/bin/backup") is None


@pytest.mark.parametrize("line", ["CRON_TZ=Mars/Base", "CRON_TZ=localtime", "TZ=Europe/Pariss",
                                  "CRON_TZ=Factory"])
def test_a_zone_line_that_names_no_zone_refuses_the_import_naming_the_line(line) -> None:
    """The lines after it would be read in another zone than cron's: refused, not warned."""
    text = f"# nightly\n{line}\n30 2 * * * curl -fsS https://example.com/run\n"
    with pytest.raises(CrontabRefused) as caught:
        import_crontab(text)
    assert caught.value.line == 2 and str(caught.value).startswith(f"line 2: {line}:")


def test_localtime_is_not_a_zone_anywhere() -> None:
    with pytest.raises(InvalidSchedule, match="'localtime' is not a time zone"):
        parse_schedule("0 9 * * *", "localtime", anchor=datetime(2026, 1, 1, tzinfo=UTC))
