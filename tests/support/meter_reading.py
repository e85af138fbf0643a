"""What a context meter carries from one walk to the next, as values to compare."""

from __future__ import annotations

from dcp_plugin.budget.meter import ContextMeter


def meter_reading(meter: ContextMeter) -> tuple[object, ...]:
    """The tracker's reading of the history, the sent record and what calibration learned (its fit memo aside)."""
    tracker = meter.tracker
    return (
        tracker.last,
        tracker._state,
        tracker._before_last,
        tracker._mark,
        tracker._image_tokens,
        list(tracker._sent.by_count.items()),
        tracker.calibrator.to_dict(),
    )
