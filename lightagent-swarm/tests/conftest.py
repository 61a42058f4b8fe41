"""The swarm tests import their shared helpers from swarm_kit.py beside this file."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
