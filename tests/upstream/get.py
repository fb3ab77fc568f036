"""Download the frameworks' own callback tests listed in sources.json into files/.

    python tests/upstream/get.py                   # from GitHub, at each file's commit (or tag)
    python tests/upstream/get.py --git DIR         # from a local clone of that repository

Each file is checked against its recorded sha256 when there is one; a file without one
(pinned by tag only) prints its sha256 so it can be recorded. The files are Apache-2.0
(their LICENSE is fetched next to them) and are not committed to this repository.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = os.path.join(HERE, "files")


def sources() -> list[dict]:
    with open(os.path.join(HERE, "sources.json")) as f:
        return json.load(f)["files"]


def _from_github(src: dict) -> bytes:
    ref = src["commit"] or src["tag"]
    url = f"https://raw.githubusercontent.com/{src['repo']}/{ref}/{src['path']}"
    with urllib.request.urlopen(url, timeout=60) as response:
        return response.read()


def _from_git(src: dict, git_dir: str) -> bytes:
    ref = src["commit"] or src["tag"]
    return subprocess.run(["git", "--git-dir", git_dir, "show", f"{ref}:{src['path']}"],
                          check=True, capture_output=True).stdout


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git", metavar="DIR",
                        help="a local clone (its git directory) to read the files from")
    args = parser.parse_args(argv)
    os.makedirs(FILES, exist_ok=True)
    bad = 0
    for src in sources():
        if args.git:
            try:
                data = _from_git(src, args.git)
            except subprocess.CalledProcessError:
                continue    # another repository's file
        else:
            data = _from_github(src)
        digest = hashlib.sha256(data).hexdigest()
        if src["sha256"] and digest != src["sha256"]:
            print(f"get.py: {src['repo']}:{src['path']} at {src['commit'] or src['tag']} has "
                  f"sha256 {digest}, not the recorded {src['sha256']}", file=sys.stderr)
            bad += 1
            continue
        with open(os.path.join(FILES, src["name"]), "wb") as f:
            f.write(data)
        pinned = "" if src["sha256"] else f"  (not pinned: sha256 {digest})"
        print(f"{src['name']}: {src['repo']}@{src['tag']}:{src['path']}{pinned}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
