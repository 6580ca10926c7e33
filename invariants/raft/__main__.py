"""``python -m invariants.raft > specs/raft-invariants.md``: print the generated catalogue."""

import sys

from invariants.raft import catalogue_markdown

sys.stdout.write(catalogue_markdown())
