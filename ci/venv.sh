# Source me: create or reuse the project's virtual environment in .venv and install the
# package with its test and FMU extras.  Re-installs only when pyproject.toml changed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${MBSFMU_VENV:-$ROOT/.venv}"
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  for cand in python3.11 python3.12 python3.10 python3; do
    if command -v "$cand" >/dev/null 2>&1; then PY="$cand"; break; fi
  done
fi
if [ ! -x "$VENV/bin/python" ]; then
  echo "ci: creating virtual environment $VENV with $PY" >&2
  "$PY" -m venv "$VENV"
fi
STAMP="$VENV/.mbsfmu-installed"
HASH="$(sha256sum "$ROOT/pyproject.toml" | cut -c1-16)"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$HASH" ] || ! "$VENV/bin/python" -c "import mbsfmu" 2>/dev/null; then
  echo "ci: installing mbsfmu and its dependencies into $VENV" >&2
  "$VENV/bin/python" -m pip install -q --upgrade pip >&2
  "$VENV/bin/python" -m pip install -q -e "$ROOT[test,fmu]" >&2
  echo "$HASH" > "$STAMP"
fi
export PATH="$VENV/bin:$PATH"
cd "$ROOT"
