#!/usr/bin/env bash
# Deliberately refresh constraints.txt: fresh venv, latest allowed releases, freeze.
# Run `make test` afterwards and commit both files together.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
python3 -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet --upgrade pip
"$tmp/venv/bin/pip" install --quiet uv -e ".[test,oracle,browser,site,mutation]"   # uv: the installer make uses; mutation: make mutants
{ sed -n '1,2p' constraints.txt; "$tmp/venv/bin/pip" freeze --exclude-editable | grep -vi '^opalg'; } > constraints.new
mv constraints.new constraints.txt
rm -rf "$tmp"
