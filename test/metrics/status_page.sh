#!/usr/bin/env bash
# status_page.sh - ldmd's status page (GET /, ldmd/metrics/status.html,
# docs/metrics.md section 7) in a real browser: headless Chromium driven
# through chromedriver's WebDriver HTTP API with curl.  Two of our servers
# on 127.0.0.1 as a relay pair (down REQUESTs IDS from up), the endpoint
# on in both.  With curl: / is the page as built from the tree, as
# text/html with a strict Content-Security-Policy (whose hashes are
# checked against the page's script and style when openssl is installed;
# the browser checks them anyway).  In the browser: the
# page loads (its title), its script runs under that policy (it refreshes,
# nothing is blocked, its style applies), it shows down's feed and its
# requester to up, and up's feeder to down; its plots update: their
# sample counts grow, and the plotted latency moves from about 2 s to
# about 30 s when products created 30 s before their insertion follow
# products created 2 s before.  The screenshot is checked to be a PNG; with
# UPDATE_SCREENSHOT=1 it is made after a minute of varied traffic and
# copied to docs/status-page.png in the source tree.
#
# Without chromium and chromedriver (scripts/dev.sh installs them), or a
# browser that does not start, the browser part is skipped (exit 77; a
# failure under CI=true).
#
# With a third argument, noaaportIngester: one beside up, on LDM's
# vector, shows in the page's ingesters' part (its frames, missed frames,
# products).
#
# Usage: status_page.sh LDMD LDM6_PEER [NOAAPORTINGESTER]

TOP=$(cd "$(dirname "$0")/../.." && pwd) # the source tree (lib.sh moves away)
INGESTER=
[[ -n ${3:-} ]] && INGESTER=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
# shellcheck source-path=SCRIPTDIR source=../net/lib.sh
source "$TOP/test/net/lib.sh" "$1" "$2"
# shellcheck source-path=SCRIPTDIR source=../net/relay_lib.sh
source "$TOP/test/net/relay_lib.sh"
seed_init # the products' bytes (-z): PQ_TEST_SEED=N replays them
command -v curl >/dev/null || fail "curl is not installed (scripts/dev.sh installs it)"
RELAY_REQUESTER_KEYS='<retry-min>1</retry-min><retry-max>1</retry-max>'
# shellcheck source-path=SCRIPTDIR source=driver_lib.sh
source "$TOP/test/metrics/driver_lib.sh" # start_driver: WD, DRIVER_PID
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
SESSION= # the WebDriver session

# status_cleanup: the EXIT trap: the browser first (its session deleted,
# then chromedriver and what it started killed by pid), then the servers.
status_cleanup() {
  local st=$? kids
  if [[ -n $SESSION ]]; then
    curl -sS --max-time 10 -X DELETE "$WD/session/$SESSION" >/dev/null 2>&1
  fi
  if [[ -n $DRIVER_PID ]]; then
    kids=$(descendants "$DRIVER_PID")
    # shellcheck disable=SC2086
    kill -KILL "$DRIVER_PID" $kids 2>/dev/null
    wait "$DRIVER_PID" 2>/dev/null
  fi
  (exit "$st")
  relay_cleanup
}
trap status_cleanup EXIT

# descendants PID: every process under PID.
descendants() {
  local k
  for k in $(children_of "$1"); do
    echo "$k"
    descendants "$k"
  done
}

# addr NAME: where NAME serves its figures (from its log).
addr() {
  srv_log "$1" | sed -n 's|.*serving metrics on http://\([^/]*\)/metrics.*|\1|p' |
    tail -1
}

# ---- WebDriver over curl -----------------------------------------------
# wd METHOD PATH [JSON]: a WebDriver command; the answer in $WD_OUT, false
# if it is not HTTP 200.
wd() {
  local code
  code=$(curl -sS --max-time 60 -o "$SCRATCH/wd.out" -w '%{http_code}' \
    -X "$1" -H 'Content-Type: application/json' ${3:+--data-binary "$3"} \
    "$WD$2" 2>"$SCRATCH/wd.err") || code=000
  WD_OUT=$(cat "$SCRATCH/wd.out" 2>/dev/null)
  [[ $code == 200 ]]
}

# js SCRIPT: run SCRIPT (a function body returning a string with no quote
# or backslash) in the page; prints what it returned.
js() {
  local body
  body="{\"script\":\"$1\",\"args\":[]}"
  wd POST "/session/$SESSION/execute/sync" "$body" ||
    fail "the script '$1' failed in the page: $WD_OUT"
  sed -n 's/^{"value":"\(.*\)"}$/\1/p' <<<"$WD_OUT"
}

# page_is SCRIPT OP VALUE: does what SCRIPT returns compare so (awk: == >=
# >, on numbers; "is" for strings)?
page_is() {
  local v
  v=$(js "$1")
  if [[ $2 == is ]]; then
    [[ $v == "$3" ]]
  else
    [[ -n $v ]] && awk -v v="$v" -v n="$3" "BEGIN { exit !(v $2 n) }"
  fi
}

# page_within SECONDS SCRIPT OP VALUE TEXT: it must, within SECONDS.
page_within() {
  wait_until "$1" page_is "$2" "$3" "$4" ||
    fail "$5: the page says '$(js "$2")', not $3 $4 within $1 s"
}

# What the tests read in the page (docs/metrics.md section 7).
REFRESHES='return document.body.dataset.refreshes;'
ERRORS='return document.body.dataset.errors;'
VIOLATIONS='return document.body.dataset.cspViolations;'
TITLE='return document.title;'
# plot_attr PLOT SERIES ATTR: a script for ATTR of SERIES in PLOT (svg id).
plot_attr() {
  printf "var g = document.querySelector('#%s g[data-series=\\\\\"%s\\\\\"]'); return g ? g.dataset.%s : '';" \
    "$1" "$2" "$3"
}
# cell TABLE ATTR VALUE COLUMN: the text of COLUMN (from 1) of the row of
# TABLE whose data-ATTR is VALUE.
cell() {
  printf "var r = document.querySelector('#%s tr[data-%s=\\\\\"%s\\\\\"]'); return r ? r.cells[%d].textContent : '';" \
    "$1" "$2" "$3" "$(($4 - 1))"
}

# insert N AGE IDENT DELAY_MS: N products of 1000 bytes into up's queue,
# created AGE seconds before their insertion, DELAY_MS apart.
insert() {
  expect_rc 0 "$PEER" insert -q "$(srv_queue up)" -n "$1" -s 1000 -f IDS \
    -a "$2" -i "$3" -z "$RANDOM" -d "$4"
}

# ---- the relay pair ----------------------------------------------------
metrics_key() {
  sed -i "s|</registry>|  <metrics>$2</metrics>\n</registry>|" \
    "$(srv_dir "$1")/registry.xml"
}
srv_init up 100000000 5000
srv_init down 100000000 5000
metrics_key up '<http-address>127.0.0.1:0</http-address>'
metrics_key down '<http-address>127.0.0.1:0</http-address>'
srv_upstream up
srv_downstream down up IDS
UP=$(addr up)
DOWN=$(addr down)
[[ -n $UP && -n $DOWN ]] || srv_fail down "no metrics address in the logs"
wait_until 10 eval "curl -sS -f http://$DOWN/status.json | grep -qF '\"kind\":\"requester\"'" ||
  srv_fail down "down's /status.json shows no requester"
insert 20 2 first 0
wait_until 15 holds "$(srv_queue down)" 20 || srv_fail down "down lacks products"

# ---- the page as served ------------------------------------------------
curl -sS -f -D headers -o page.html "http://$DOWN/" || fail "no page at /"
cmp -s page.html "$TOP/ldmd/metrics/status.html" ||
  fail "/ is not ldmd/metrics/status.html as it is in the tree (rebuild?)"
tr -d '\r' <headers >headers.txt
expect_in headers.txt 'Content-Type: text/html; charset=utf-8'
expect_in headers.txt "Content-Security-Policy: default-src 'none'; "
expect_in headers.txt "connect-src 'self'"
expect_in headers.txt 'X-Content-Type-Options: nosniff'
if command -v openssl >/dev/null; then
  for tag in script style; do
    # The element's text: from the newline after <TAG> to </TAG>.
    hash=$(awk -v t="$tag" 'BEGIN { printf "\n" } $0 == "</" t ">" { p = 0 } p { print }
      $0 == "<" t ">" { p = 1 }' page.html | openssl dgst -sha256 -binary | base64)
    expect_in headers.txt "$tag-src 'sha256-$hash'"
  done
fi
code=$(curl -sS -o /dev/null -w '%{http_code}' -I "http://$DOWN/")
[[ $code == 200 ]] || fail "HEAD / answered $code, not 200"
ok "/ is the page of the tree, text/html, with a policy that allows its own script and style only"

# ---- the browser -------------------------------------------------------
browser() {
  if [[ ! -x $CHROMIUM || ! -x $CHROMEDRIVER ]]; then
    skip_part "no $CHROMIUM or $CHROMEDRIVER (Debian's chromium, chromium-driver): the page in a browser"
    return 1
  fi
  if ! start_driver driver.log; then
    skip_part "chromedriver did not start (ports ${DRIVER_PORTS[*]}): $(head -c 500 driver.log)"
    return 1
  fi
  wait_until 20 eval "curl -sS --max-time 2 $WD/status | grep -q '\"ready\":true'" ||
    fail "chromedriver at $WD is not ready within 20 s"
  # As root (no sandbox) on a host with no Internet (no background fetches).
  mkdir -p profile
  if ! wd POST /session "{\"capabilities\":{\"alwaysMatch\":{\"browserName\":\"chrome\",
      \"goog:chromeOptions\":{\"binary\":\"$CHROMIUM\",\"args\":[\"--headless\",
      \"--no-sandbox\",\"--disable-gpu\",\"--disable-quic\",\"--no-first-run\",
      \"--disable-background-networking\",\"--disable-component-update\",
      \"--disable-sync\",\"--disable-dev-shm-usage\",\"--window-size=1300,1200\",
      \"--user-data-dir=$SCRATCH/profile\"]}}}}"; then
    skip_part "chromium does not start: $(sed -n \
      's/.*"message":"\([^"]*\)".*/\1/p' <<<"$WD_OUT" | head -c 500)"
    return 1
  fi
  SESSION=$(sed -n 's/.*"sessionId":"\([0-9a-f]*\)".*/\1/p' <<<"$WD_OUT")
  [[ -n $SESSION ]] || fail "no session id in chromedriver's answer: $WD_OUT"
}

# open URL: the browser goes there.
open() {
  wd POST "/session/$SESSION/url" "{\"url\":\"$1\"}" ||
    fail "the browser cannot open $1: $WD_OUT"
}

# loaded: the page's title, one refresh at least, no error, nothing
# blocked by the policy, and its style applied.
loaded() {
  page_within 15 "$TITLE" is 'ldmd status' "the title"
  page_within 15 "$REFRESHES" '>=' 1 "the refreshes"
  page_is "$ERRORS" == 0 || fail "the page failed to read /status.json $(js "$ERRORS") times"
  page_is "$VIOLATIONS" == 0 ||
    fail "the policy blocked $(js "$VIOLATIONS") things in the page"
  page_is 'return getComputedStyle(document.querySelector(\"th\")).backgroundColor;' \
    is 'rgb(238, 238, 238)' || fail "the page's style is not applied"
}

if browser; then
  # ---- down: its feed, its requester, its plots
  open "http://$DOWN/?interval=500"
  loaded
  page_within 10 "$(cell feeds feed IDS 2)" == 20 "down's IDS products"
  version=$(curl -sS -f "http://$DOWN/status.json" |
    sed -n 's/^{"version":"\([^"]*\)".*/\1/p')
  [[ -n $version ]] || fail "no version in down's /status.json"
  page_is 'return document.getElementById(\"version\").textContent;' is "$version" ||
    fail "the page shows version '$(js 'return document.getElementById(\"version\").textContent;')', not $version"
  # A requester's peer: "HOST port N".
  requester="127.0.0.1 port ${SRV_PORT[up]}"
  page_is "$(cell connections kind requester 2)" is "$requester" ||
    fail "down's requester shows peer '$(js "$(cell connections kind requester 2)")', not '$requester'"
  page_is "$(cell connections kind requester 5)" == 20 ||
    fail "down's requester shows $(js "$(cell connections kind requester 5)") products, not 20"
  page_is "return document.getElementById('q-products').textContent;" == 20 ||
    fail "down's queue shows $(js "return document.getElementById('q-products').textContent;") products, not 20"
  ok "the page loads in Chromium and shows down's feed IDS and its requester to up"

  n=$(js "return document.getElementById('plot-feed-latency').dataset.samples;")
  page_within 10 "return document.getElementById('plot-feed-latency').dataset.samples;" \
    '>=' $((n + 3)) "the latency plot's samples"
  page_within 10 "$(plot_attr plot-conn-rate "requester $requester" samples)" \
    '>=' 3 "the samples of the requester's rate plot"
  # Products 2 s old, then 30 s old: the plotted mean latency follows.
  insert 10 2 two 50
  page_within 15 "$(plot_attr plot-feed-latency IDS last)" '>=' 2 "the latency plotted"
  page_is "$(plot_attr plot-feed-latency IDS last)" '<' 5 ||
    fail "the latency plotted is $(js "$(plot_attr plot-feed-latency IDS last)"), not about 2 s"
  insert 10 30 thirty 50
  page_within 15 "$(plot_attr plot-feed-latency IDS last)" '>=' 29 \
    "the latency plotted after products 30 s old"
  page_within 10 "$(cell feeds feed IDS 2)" == 40 "down's IDS products after 40"
  page_is "$(plot_attr plot-feed-rate IDS defined)" '>=' 3 ||
    fail "the rate plot has $(js "$(plot_attr plot-feed-rate IDS defined)") points"
  ok "the plots update: samples grow, the latency plotted went from about 2 s to $(js "$(plot_attr plot-feed-latency IDS last)") s"

  # ---- up: its feeder to down
  open "http://$UP/?interval=500"
  loaded
  # A feeder's peer: "NAME (ADDRESS)"; its class as LDM writes it.
  page_within 10 "$(cell connections kind upstream 2)" is 'localhost (127.0.0.1)' \
    "up's feeder's peer"
  page_within 10 "$(cell connections kind upstream 5)" == 40 "up's feeder's products"
  class=$(js "$(cell connections kind upstream 3)")
  [[ $class == *'{{IDS, '* ]] || fail "up's feeder's class is '$class', not one of IDS"
  ok "up's page shows its feeder to down"

  # ---- up: a NOAAPORT ingester beside it (docs/metrics.md, "Ingesters")
  if [[ -n $INGESTER ]]; then
    page_is 'return String(document.getElementById(\"ingesters-part\").hidden);' \
      is true || fail "the ingesters' part shows with no ingester"
    mkfifo np.in
    exec 7<>np.in # a writer kept open: the ingester keeps running
    LDM_REGISTRY=$(srv_dir up)/registry.xml "$INGESTER" -l np.log <np.in &
    BG_PIDS+=("$!")
    cat "$TOP/test/ingest/vectors/nwstg-basic.sbn" >&7
    page_within 15 "$(cell ingesters channel stdin 3)" == 14 "the ingester's frames"
    page_is "$(cell ingesters channel stdin 4)" is '0 (0.00%)' ||
      fail "the ingester's missed frames show '$(js "$(cell ingesters channel stdin 4)")'"
    page_within 10 "$(cell ingesters channel stdin 6)" == 13 "the ingester's products"
    page_is 'return String(document.getElementById(\"ingesters-part\").hidden);' \
      is false || fail "the ingesters' part is hidden with an ingester"
    ok "up's page shows the ingester's frames, gaps and products"
  fi

  # ---- the screenshot
  open "http://$DOWN/"
  loaded
  if [[ ${UPDATE_SCREENSHOT:-} == 1 ]]; then
    # A minute of traffic with latencies that change, for plots that show.
    for age in 2 5 1 12 3 8; do
      insert 20 "$age" "shot$age" 500
    done
  else
    page_within 10 "$REFRESHES" '>=' 2 "the refreshes before the screenshot"
  fi
  wd GET "/session/$SESSION/screenshot" || fail "no screenshot: $WD_OUT"
  sed -n 's/^{"value":"\(.*\)"}$/\1/p' <<<"$WD_OUT" | base64 -d >status-page.png ||
    fail "the screenshot is not base64"
  [[ $(head -c 8 status-page.png | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] ||
    fail "the screenshot is not a PNG"
  if [[ ${UPDATE_SCREENSHOT:-} == 1 ]]; then
    cp status-page.png "$TOP/docs/status-page.png" ||
      fail "cannot write $TOP/docs/status-page.png"
    ok "screenshot saved to $TOP/docs/status-page.png"
  fi
  ok "a screenshot of the page ($(stat -c %s status-page.png) bytes of PNG)"
  wd DELETE "/session/$SESSION" || fail "cannot close the browser: $WD_OUT"
  SESSION=
fi

srv_stop down
srv_stop up
