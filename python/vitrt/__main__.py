# SPDX-License-Identifier: Apache-2.0
"""python3 -m vitrt classify|run|bench|eval|inspect|preprocess|convert ...: the command-line tools in-process.

Every subcommand is the CLI's own code (`vitrt SUBCOMMAND --help` and `vitrt-convert --help` say what each takes);
the exit code is the tools' (0 ok, 1 usage, 2 bad model, 3 bad input, 4 runtime failure).
"""
import sys
from typing import Optional, Sequence


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    sys.stdout.flush()
    sys.stderr.flush()
    if args and args[0] == "convert":
        from . import _convert

        rc, out, err = _convert.convert_command(["vitrt-convert", *args[1:]])
        sys.stdout.write(out)
        sys.stderr.write(err)
        return rc
    from . import _vitrt

    rc = _vitrt._cli_main(["python3 -m vitrt", *args])
    if not args or args[0] in ("-h", "--help"):
        print("  convert                     convert a checkpoint or ONNX model (vitrt-convert's flags)")
    return rc


if __name__ == "__main__":
    sys.exit(main())
