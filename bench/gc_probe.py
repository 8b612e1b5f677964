"""Times every garbage collection while active, on any thread (a pass holds the GIL, so one on a
worker stalls the GUI thread as surely as one on it): ``with GcProbe() as probe: ...``."""

from __future__ import annotations

import gc
import threading
import time


class GcProbe:
    """The passes seen: (generation, seconds, thread name, start as ``time.perf_counter()``)."""

    def __init__(self) -> None:
        self.passes: list[tuple[int, float, str, float]] = []
        self._started = 0.0

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.passes.append(
                (
                    info["generation"],
                    time.perf_counter() - self._started,
                    threading.current_thread().name,
                    self._started,
                )
            )

    def __enter__(self) -> GcProbe:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._callback)

    def within(self, start: float, end: float) -> str:
        """The passes that ran (in part) between two ``time.perf_counter()`` readings, in words."""
        seen = [
            f"gen {g} {s * 1000:.1f} ms on {t}" for g, s, t, at in self.passes if at < end and at + s > start
        ]
        return ", ".join(seen) if seen else "no GC pass"

    def report(self) -> str:
        full = [(s, t) for g, s, t, _ in self.passes if g == 2]
        young = [s for g, s, _, _ in self.passes if g < 2]
        if not full:
            return f"gc: no full passes; {len(young)} young passes, {ms(sum(young))} in all; {tracked()}"
        threads = sorted({t for _, t in full})
        return (
            f"gc: {len(full)} full passes, longest {ms(max(s for s, _ in full))}, "
            f"{ms(sum(s for s, _ in full))} in all (on {', '.join(threads)}); "
            f"{len(young)} young passes, {ms(sum(young))}; {tracked()}"
        )


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def tracked() -> str:
    return f"tracked objects now {len(gc.get_objects()):,} (+{gc.get_freeze_count():,} frozen)"
