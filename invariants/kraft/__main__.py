"""``python -m invariants.kraft > specs/kraft-invariants.md``: print the generated catalogue."""

import sys

from invariants.kraft import catalogue_markdown

sys.stdout.write(catalogue_markdown())
