"""``kcontrol check`` and ``kcontrol replay``: the model checker's own commands
(``model_check.command``), with the console script's fast exit after a local search
(``fast_exit``)."""

from __future__ import annotations

from adapters.cli import fast_exit
from model_check.command import check_command, replay

check = check_command(outputs_complete=fast_exit.request)

__all__ = ["check", "replay"]
