"""``python -m invariants > specs/invariants.md``: print the generated catalogue."""

import sys

from invariants import catalogue_markdown

sys.stdout.write(catalogue_markdown())
