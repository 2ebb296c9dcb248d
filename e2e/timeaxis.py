"""The plots' time axis: tick labels that never repeat.

A fixed "%H:%M" labels ticks 30 s apart as 04:07, 04:07, 04:08, 04:08; here the label carries
seconds whenever the ticks are closer than a minute (matplotlib's AutoDateFormatter, keyed by the
locator's tick spacing in days).
"""
import matplotlib.dates as mdates

FORMATS = {1.0: "%Y-%m-%d", 1 / 24: "%H:%M", 1 / 1440: "%H:%M", 1 / 86400: "%H:%M:%S"}


def time_axis(ax, maxticks=15):
    loc = mdates.AutoDateLocator(minticks=5, maxticks=maxticks)
    fmt = mdates.AutoDateFormatter(loc)
    fmt.scaled = dict(FORMATS)
    ax.xaxis.set_major_locator(loc)
    ax.xaxis.set_major_formatter(fmt)


def labels_repeat(ax):
    """True when two ticks of this (drawn) axis carry the same label: what time_axis prevents."""
    texts = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    return len(texts) != len(set(texts))


if __name__ == "__main__":
    # A self-check: spans from 3 minutes to 2 hours, no repeated label (exit 1 if one repeats).
    import sys
    from datetime import datetime, timedelta, timezone

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bad = 0
    for minutes in (1, 3, 7, 12, 30, 90, 120):
        for width, maxticks in ((14, 15), (5, 8)):
            t0 = datetime(2026, 11, 26, 4, 7, 13, tzinfo=timezone.utc)
            ts = [t0 + timedelta(seconds=s) for s in range(minutes * 60)]
            fig, ax = plt.subplots(figsize=(width, 3))
            ax.plot(ts, range(len(ts)))
            time_axis(ax, maxticks)
            fig.canvas.draw()
            labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
            ok = not labels_repeat(ax) and len(labels) >= 2
            bad += not ok
            print(f"{'ok ' if ok else 'BAD'} {minutes:>3} min, {width} in: {' '.join(labels)}")
            plt.close(fig)
    sys.exit(1 if bad else 0)
