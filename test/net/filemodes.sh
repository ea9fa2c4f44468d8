#!/usr/bin/env bash
# Files that hold a site's products or where its feeds stand keep other
# local users out, whatever the umask (here 000, the worst): a new queue is
# 0660 (pq_create(), what pqcreate and ldm6_peer mkqueue use), a
# requester's state directory 0750 and its resume file 0600.  B requests
# from A; its state directory (/requester/state-dir) does not exist
# before ldmd makes it.
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib.sh" "$@"
source "$HERE/relay_lib.sh"

umask 000
srv_init A 2000000
srv_upstream A
QA=$(srv_dir A)/ldm.pq
[[ $(stat -c %a "$QA") == 660 ]] ||
  fail "a new queue under umask 000 has mode $(stat -c %a "$QA"), not 660"
ok "a new queue: 0660 under umask 000"

STATE=$SCRATCH/state
RELAY_REQUESTER_KEYS="<state-dir>$STATE</state-dir>"
srv_init B 2000000
srv_conf B <<'EOF'
REQUEST ANY .* 127.0.0.1:@A@
ALLOW ANY ^127\.0\.0\.1$
EOF
srv_start B
"$PEER" insert -q "$QA" -n 3 -f EXP -i modes >/dev/null ||
  fail "cannot insert into A"
wait_until 20 holds "$(srv_dir B)/ldm.pq" 3 || srv_fail B "B did not get A's products"
# resume_files: the requester's resume files in the state directory.
resume_files() {
  find "$STATE" -maxdepth 1 -type f ! -name '*.tmp' | grep -q .
}
wait_until 10 resume_files || srv_fail B "no resume file in $STATE"
[[ $(stat -c %a "$STATE") == 750 ]] ||
  fail "the state directory has mode $(stat -c %a "$STATE"), not 750"
while read -r f; do
  [[ $(stat -c %a "$f") == 600 ]] ||
    fail "the resume file $f has mode $(stat -c %a "$f"), not 600"
done < <(find "$STATE" -maxdepth 1 -type f ! -name '*.tmp')
ok "the requester's state: directory 0750, resume file 0600, under umask 000"
