"""The results table of ``vitrt.dask.classify``: one row per image, appended as partitions finish, read back to resume.

Two formats, chosen by the output's extension: CSV (``.csv``) with the columns ``path`` (``index`` for an array
source), ``label1, score1, ..., labelK, scoreK`` and ``error``; JSON lines (``.jsonl``, ``.ndjson``) with one object
``{"path": ..., "labels": [...], "scores": [...], "error": null}`` per line. A row is the unit of resumption: a rerun
reads the keys already in the file and skips them, and every key is written at most once per run (a partition
recomputed after a lost worker, or a partition half written before a crash, adds only its missing rows). A rerun with
retry_errors re-queues the keys whose last row has an error and appends their new rows: a key may then have several
rows, and the last one is its result (read_table keeps only that). A line cut short by a crash mid-write (no final
newline) is dropped on reopening, but only once the complete lines before it read as this run's table: a file that is
not one is refused and left as it is.
"""
import csv
import io
import json
import os

FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}


def table_format(path, fmt=None):
    """'csv' or 'jsonl' for `path` (by its extension unless `fmt` names one)."""
    if fmt is not None:
        if fmt not in ("csv", "jsonl"):
            raise ValueError(f"format must be 'csv' or 'jsonl', not {fmt!r}")
        return fmt
    ext = os.path.splitext(os.fspath(path))[1].lower()
    if ext not in FORMATS:
        raise ValueError(f"{os.fspath(path)!r}: cannot tell the table format from the extension {ext!r} "
                         f"(expected one of {', '.join(sorted(FORMATS))}, or pass format='csv'|'jsonl')")
    return FORMATS[ext]


def _read_table_text(path):
    """(the file's text up to its last newline, the torn rest after it)."""
    with open(path, "rb") as f:
        data = f.read()
    end = data.rfind(b"\n") + 1
    return data[:end].decode("utf-8", errors="surrogateescape"), data[end:]


def _truncate(path, text):
    """Cuts a torn last line away (after the rows before it were checked), so appends start clean."""
    with open(path, "r+b") as f:
        f.truncate(len(text.encode("utf-8", errors="surrogateescape")))


class ResultsTable:
    """An append-only table keyed by path (str) or array index (int)."""

    def __init__(self, path, top_k, key_column, fmt=None):
        if key_column not in ("path", "index"):
            raise ValueError(f"key_column must be 'path' or 'index', not {key_column!r}")
        self.path = os.fspath(path)
        self.top_k = top_k
        self.key_column = key_column
        self.format = table_format(self.path, fmt)
        self.done = set()  # keys already in the file (for this run: keys it must not write)
        self.failed = set()  # keys whose last row in the file has an error
        self._file = None
        self._csv = None

    def header(self):
        cols = [self.key_column]
        for i in range(1, self.top_k + 1):
            cols += [f"label{i}", f"score{i}"]
        return cols + ["error"]

    def open(self, resume=True, retry_errors=False):
        """Opens for appending; with `resume`, first reads the keys already written. With `retry_errors`, the keys
        whose last row has an error are left out of `done`, so that this run writes them again."""
        exists = os.path.exists(self.path) and os.path.getsize(self.path) > 0
        if resume and exists:
            text, torn = _read_table_text(self.path)
            if self.format == "csv":
                self._read_csv_keys(text, torn)
            else:
                self._read_jsonl_keys(text, torn)
            if torn:
                _truncate(self.path, text)  # only now: the file is this run's table
            if retry_errors:
                self.done -= self.failed
        mode = "a" if resume and exists else "w"
        self._file = open(self.path, mode, encoding="utf-8", errors="surrogateescape", newline="")
        if self.format == "csv":
            self._csv = csv.writer(self._file, lineterminator="\n")
            if self._file.tell() == 0:
                self._csv.writerow(self.header())
                self._flush()

    def _key(self, value):
        return int(value) if self.key_column == "index" else value

    def _not_a_table(self, what):
        return ValueError(f"{self.path}: cannot resume: {what} (not a results table of this kind; the file is left "
                          f"as it is: write to a new file, or pass resume=False to overwrite it)")

    def _mark(self, key, error):
        self.done.add(key)
        if error:
            self.failed.add(key)
        else:
            self.failed.discard(key)  # a later row (a retry) is the key's result

    def _read_csv_keys(self, text, torn):
        rows = csv.reader(io.StringIO(text, newline=""))
        header = next(rows, None)
        if header is None:
            # Not even a complete header: a table torn while its header was written, or another file.
            expected = ",".join(self.header()).encode()
            if not expected.startswith(torn):
                raise self._not_a_table("its first line is not a header")
            return
        if header != self.header():
            raise self._not_a_table(f"its columns are {','.join(header)}, this run writes {','.join(self.header())} "
                                    f"(another top_k or source kind?)")
        for n, row in enumerate(rows, start=2):
            if len(row) != len(header):
                raise self._not_a_table(f"line {n} has {len(row)} fields, expected {len(header)}")
            self._mark(self._key(row[0]), row[-1] != "")

    def _read_jsonl_keys(self, text, torn):
        lines = text.splitlines()
        if not any(line.strip() for line in lines):
            # No complete row: a table torn in its first row (json.dumps writes the key first), or another file.
            if torn.strip() and not torn.startswith(b'{"' + self.key_column.encode() + b'": '):
                raise self._not_a_table(f"its first line is not a row with a {self.key_column!r} field")
        for n, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as e:
                raise self._not_a_table(f"line {n} is not JSON ({e})") from None
            if not isinstance(row, dict) or self.key_column not in row:
                raise self._not_a_table(f"line {n} has no {self.key_column!r} field (another source kind?)")
            self._mark(self._key(row[self.key_column]), row.get("error") is not None)

    def write(self, rows):
        """Appends the rows whose key is not in the table yet; returns (rows written, how many of them are errors).

        A row is (key, labels, scores, error): labels and scores are lists of up to top_k entries, error is None
        or the message for an image that could not be classified."""
        written = errors = 0
        for key, labels, scores, error in rows:
            if key in self.done:
                continue
            self._mark(key, error is not None)
            written += 1
            errors += error is not None
            if self.format == "csv":
                cells = [key]
                for i in range(self.top_k):
                    cells += [labels[i], repr(scores[i])] if i < len(labels) else ["", ""]
                self._csv.writerow(cells + ["" if error is None else error])
            else:
                self._file.write(json.dumps({self.key_column: key, "labels": list(labels),
                                             "scores": [float(s) for s in scores], "error": error}) + "\n")
        if written:
            self._flush()
        return written, errors

    def _flush(self):
        # Each partition reaches the disk before the next is written: a crash loses at most the rows in flight.
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self):
        if self._file is not None:
            self._file.close()
            self._file = None


def read_table(path, fmt=None):
    """Reads a table written by ResultsTable as a list of dicts {key column, 'labels', 'scores', 'error'}: one per
    key, the last row written for it (a retry_errors rerun appends a key's new row after its failed one), in the
    order the keys first appear."""
    fmt = table_format(path, fmt)
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
        if fmt == "jsonl":
            rows = [json.loads(line) for line in f if line.strip()]
            key_column = "index" if rows and "index" in rows[0] else "path"
        else:
            reader = csv.reader(f)
            header = next(reader)
            key_column, k = header[0], (len(header) - 2) // 2
            rows = []
            for row in reader:
                labels = [row[1 + 2 * i] for i in range(k) if row[1 + 2 * i] != ""]
                scores = [float(row[2 + 2 * i]) for i in range(len(labels))]
                key = int(row[0]) if key_column == "index" else row[0]
                rows.append({key_column: key, "labels": labels, "scores": scores, "error": row[-1] or None})
    last = {}
    for row in rows:
        last[row[key_column]] = row  # a dict keeps a key's first position
    return list(last.values())
