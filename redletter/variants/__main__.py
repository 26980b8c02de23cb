"""``python -m redletter.variants``: print docs/variants.md."""

from __future__ import annotations

import sys

from redletter.errors import RedletterError, advice
from redletter.project import find_project
from redletter.variants import render_page


def main() -> int:
    """Write the page on stdout; a kit error as ``error[CODE]: ...`` on stderr."""
    try:
        sys.stdout.write(render_page(find_project()))
    except RedletterError as exc:
        sys.stderr.write(f"error[{exc.code}]: {exc.message}\n{advice(exc.code)}\n")
        return int(exc.exit_code)
    return 0


if __name__ == "__main__":
    sys.exit(main())
