"""``kcontrol check`` as a ``spark-submit`` application (spark-submit runs a ``.py`` file).

    spark-submit --master spark://HOST:7077 --py-files kcontrol.zip \\
        model_check/spark/submit.py standard --partitions 64 --json standard.json

runs ``kcontrol check standard --engine spark --partitions 64 --json standard.json`` in the
driver spark-submit starts, on its master and configuration (the command's ``--master``
is not needed). It is the checker's own command (``model_check.command``), not the
``kcontrol`` command line: no adapter is imported. The driver needs kcontrol installed (it
also prints and writes reports); the executors need only the packages the search runs --
``fsm``, ``invariants`` and ``model_check``, plain Python -- which ``--py-files`` ships
(README).
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a file, this module's directory heads sys.path; its modules must not shadow
# top-level names (``session``, ``tasks``, ...), so it goes.
_here = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _here]


def main(argv: list[str] | None = None) -> None:
    from model_check.command import check_command

    args = list(sys.argv[1:] if argv is None else argv)
    if "--engine" not in args:
        args += ["--engine", "spark"]
    check_command().main(args=args, prog_name="kcontrol check")


if __name__ == "__main__":
    main()
