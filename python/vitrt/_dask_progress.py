"""A text progress bar for ``vitrt.dask.classify`` on stderr (no dependency beyond the standard library).

On a terminal it redraws one line (at most every 0.2 s); elsewhere (a log file, CI) it prints a line at most
every 10 s, so logs stay short. Rates count only the images classified in this run, not those resumed.
"""
import sys
import time


class Progress:
    def __init__(self, total, done=0, stream=None, enabled=True, label="vitrt.dask"):
        self.total = total
        self.done = done
        self.resumed = done
        self.stream = sys.stderr if stream is None else stream
        self.enabled = enabled
        self.label = label
        self.start = time.monotonic()
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._interval = 0.2 if self._tty else 10.0
        self._last = -1e9
        if enabled and done:
            self.stream.write(f"{label}: resuming, {done} of {total} images already in the output\n")

    def rate(self):
        elapsed = time.monotonic() - self.start
        return (self.done - self.resumed) / elapsed if elapsed > 0 else 0.0

    def line(self, width=30):
        frac = self.done / self.total if self.total else 1.0
        filled = int(frac * width)
        rate = self.rate()
        left = self.total - self.done
        eta = f"{left / rate:.0f} s" if rate > 0 else "?"
        return (f"{self.label}: [{'#' * filled}{'-' * (width - filled)}] {self.done}/{self.total} "
                f"{100 * frac:3.0f}% {rate:.1f} img/s, {eta} left")

    def update(self, n):
        self.done += n
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last >= self._interval or self.done >= self.total:
            self._last = now
            self.stream.write(("\r" + self.line()) if self._tty else (self.line() + "\n"))
            self.stream.flush()

    def close(self):
        if self.enabled:
            elapsed = time.monotonic() - self.start
            end = "\n" if self._tty else ""
            self.stream.write(f"{end}{self.label}: {self.done - self.resumed} images in {elapsed:.1f} s "
                              f"({self.rate():.1f} img/s)\n")
            self.stream.flush()
