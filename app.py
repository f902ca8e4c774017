"""Start the Bookmarks web app: `python app.py [--host H] [--port P] [--share]`."""

import argparse
import sys

from bookmarks.cli import add_serve_args
from bookmarks.errors import BookmarksError

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    add_serve_args(parser)
    args = parser.parse_args()
    try:
        from ui.server import serve

        serve(host=args.host, port=args.port, share=args.share)
    except BookmarksError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
