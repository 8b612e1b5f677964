"""The install step (packaging/bootstrap.sh) brings fonts for emoji and CJK text: Qt finds a font
for each, so a space named in Chinese or a message with an emoji does not render as boxes."""

from __future__ import annotations

from PySide6.QtGui import QFont, QFontDatabase, QRawFont

EMOJI = 0x1F600  # 😀
CJK = 0x4E2D  # 中


def _covering(codepoint: int) -> list[str]:
    return [
        family
        for family in QFontDatabase.families()
        if QRawFont.fromFont(QFont(family)).supportsCharacter(codepoint)
    ]


def test_a_font_covers_cjk(qapp) -> None:
    assert QFontDatabase.families(QFontDatabase.WritingSystem.SimplifiedChinese)
    assert _covering(CJK), "no font for CJK text: run packaging/bootstrap.sh"


def test_a_font_covers_emoji(qapp) -> None:
    assert _covering(EMOJI), "no font for emoji: run packaging/bootstrap.sh"
