"""``python -m adapters.raft_node``: see ``adapters.raft_node.process``."""

import sys

from adapters.raft_node.process import main

sys.exit(main())
