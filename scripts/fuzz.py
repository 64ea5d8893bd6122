#!/usr/bin/env python3
"""Structure-aware differential fuzzer (all four protocols, core vs twin, batch and replay).

    python scripts/fuzz.py --protocol open,avro --seconds 600 --seed 1 --out fuzz-findings
    python scripts/fuzz.py --replay fuzz-findings/open/crash-xxxx/case-12.json
    scripts/sanitize.sh fuzz --seconds 3600          # the same under ASan/UBSan

See ticdc_fast/testing/fuzz.py and README.md (Development)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from ticdc_fast.testing.fuzz import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
