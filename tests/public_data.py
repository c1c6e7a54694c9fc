"""Where the tests find the public resources (word lists, annotated query sets, TREC runs).

They sit beside the checkout, in ``../shared/data/public``; ``RANKBIAS_PUBLIC_DATA`` names
another folder (``make mutation`` runs the tests from a copy of the project one level deeper).
The tests that need them skip only when that folder is absent.
"""

import os
from pathlib import Path

PUBLIC = Path(
    os.environ.get("RANKBIAS_PUBLIC_DATA")
    or Path(__file__).resolve().parents[1].parent / "shared" / "data" / "public"
)
