#!/usr/bin/env bash
# Browser tests of the web player: a real headless Chromium (Debian's chromium, driven by
# playwright-core from npm) against 'ansight demo --keep-running'. Page screenshots are
# saved under player/e2e/artifacts/.
#
# Skips (exit 0, with a message) only when no Chromium can be installed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

chromium=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$chromium" ]; then
  echo "== installing chromium"
  if command -v apt-get >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo -n"
    if ! { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null; }; then
      echo "SKIP player e2e: chromium could not be installed (apt-get failed)"
      exit 0
    fi
  fi
  if [ ! -x "$chromium" ]; then
    echo "SKIP player e2e: no chromium at $chromium and no way to install it"
    exit 0
  fi
fi
command -v node >/dev/null || { echo "player e2e: node is required"; exit 1; }

echo "== npm install (player/e2e)"
(cd player/e2e && npm install --no-audit --no-fund --loglevel=error)

work=$(mktemp -d)
demo_pid=""
cleanup() {
  if [ -n "$demo_pid" ] && kill -0 "$demo_pid" 2>/dev/null; then
    kill "$demo_pid" 2>/dev/null || true
    wait "$demo_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "== build"
GOTOOLCHAIN=${GOTOOLCHAIN:-local} go build -o "$work/ansight" ./cmd/ansight

# A free loopback port for the player (the default one may be taken by a real host).
port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')

echo "== ansight demo --keep-running (player on 127.0.0.1:$port)"
mkdir -p "$work/state"
ANSIGHT_STATE_DIR="$work/state" "$work/ansight" demo --keep-running --player "127.0.0.1:$port" \
  --screenshot "$work/demo.png" >"$work/demo.log" 2>&1 &
demo_pid=$!

# The demo's walkthrough is work that a busy machine slows: wait as long as the demo runs,
# with a hang guard of 5 minutes (it prints the URL within seconds when idle).
url=""
guard=$((SECONDS + 300))
while [ "$SECONDS" -lt "$guard" ]; do
  url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/?token=[A-Za-z0-9_%-]*' "$work/demo.log" | head -n1 || true)
  [ -n "$url" ] && break
  if ! kill -0 "$demo_pid" 2>/dev/null; then
    echo "the demo exited:"; cat "$work/demo.log"; exit 1
  fi
  sleep 0.1
done
if [ -z "$url" ]; then
  echo "hang guard: the demo printed no player URL in 5 minutes:"; cat "$work/demo.log"; exit 1
fi

echo "== browser tests"
rm -rf player/e2e/artifacts
# ANSIGHT and ANSIGHT_STATE_DIR let the tests use the CLI against the same host (export and
# import a recording).
PLAYER_URL="$url" CHROMIUM="$chromium" ARTIFACTS="$root/player/e2e/artifacts" ANSIGHT="$work/ansight" ANSIGHT_STATE_DIR="$work/state" \
  node --test --test-reporter=spec player/e2e/player.test.mjs
echo "== screenshots in player/e2e/artifacts/"
ls player/e2e/artifacts
