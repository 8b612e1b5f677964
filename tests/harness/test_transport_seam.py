"""One declaration per transport: a transport's name is spoken only by its declaration
(``core/transports.py``) and its own modules, and a fourth one declared there is picked up by the
guarantees, the surface and the harness's driver lookup without touching any other file."""

from __future__ import annotations

import re
from pathlib import Path
from types import MappingProxyType

import pytest

from control_center.core import transports
from control_center.core.guarantees import Layer, guarantee_for, operator_note
from control_center.core.modes import Autonomy, Mode, Transport
from control_center.core.profiles import profile_for
from control_center.core.surface import materialize_surface
from control_center.core.transports import TRANSPORTS, Holds, TransportSpec
from control_center.harness import loop

PACKAGE = Path(transports.__file__).resolve().parents[1]
#: Each transport's own modules (paths under the package), besides the declaration.
OWN_FILES = {
    Transport.CODEX: {
        "harness/transports/codex.py",
        "harness/transports/codex_home.py",
        "harness/transports/codex_rpc.py",
    },
    Transport.CLAUDE_CODE: {
        "harness/transports/claude_code.py",
        "harness/transports/claude_hook.py",
        "harness/transports/claude_home.py",
    },
}


def _files_naming(pattern: str) -> set[str]:
    found = set()
    for path in PACKAGE.rglob("*.py"):
        if re.search(pattern, path.read_text(encoding="utf-8")):
            found.add(path.relative_to(PACKAGE).as_posix())
    return found


@pytest.mark.parametrize("transport", sorted(OWN_FILES))
def test_a_transport_is_named_only_by_its_declaration_and_its_own_modules(transport: Transport) -> None:
    member = transport.name
    module = {"codex": "codex", "claude-code": "claude_code"}[transport.value]
    naming = _files_naming(rf"Transport\.{member}\b|transports(\.| import ){module}\b")
    assert naming, "the pattern must find the transport's own files"
    assert naming <= {"core/transports.py", *OWN_FILES[transport]}, naming - OWN_FILES[transport]


def test_no_widget_lists_transports_by_hand() -> None:
    widgets = {p for p in _files_naming(r"Transport\.(CLAUDE_CODE|CODEX)") if p.startswith("ui/")}
    assert widgets == set()


def test_a_fourth_transport_declared_once_is_read_by_guarantees_surface_and_the_harness(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cell = Holds((Layer.PROMPT,), "Echo: nothing holds but the prompt.", note="Echo: prompt only.")
    echo = TransportSpec(
        name="echo",  # type: ignore[arg-type]  # a name modes.Transport does not know yet
        label="Echo",
        settings_label="Echo (prompt only)",
        external=True,
        needs="",
        providers=("*",),
        driver="tests.harness.seam_echo.driver:EchoDriver",
        holds={(ro, os_layer): cell for ro in (True, False) for os_layer in (True, False)},
    )
    monkeypatch.setattr(transports, "TRANSPORTS", MappingProxyType({**TRANSPORTS, "echo": echo}))
    profile = profile_for(Mode.PLAN)
    g = guarantee_for(profile, "echo", True)  # type: ignore[arg-type]
    assert g.layers == (Layer.PROMPT,)
    assert operator_note(profile, "echo", False) == "Echo: prompt only."  # type: ignore[arg-type]
    # External: an allowlist refuses an omitted read tool, as on the other external transports.
    assert {t.name for t in materialize_surface(profile, Autonomy.ASK, "echo")} == {  # type: ignore[arg-type]
        t.name for t in materialize_surface(profile, Autonomy.ASK, Transport.CODEX)
    }
    monkeypatch.delitem(loop.DRIVERS, "echo", raising=False)  # type: ignore[arg-type]
    from tests.harness.seam_echo.driver import EchoDriver

    assert loop.DRIVERS["echo"] is EchoDriver  # type: ignore[index]
