#!/usr/bin/env bash
# pmucanary as a LAVA job on a real engine, with no LAVA server (issue 13):
#  - a busybox ramdisk carrying pmucanary and its libraries;
#  - `pmucanary lava job` writes the job: deploy (tmpfs) the distribution's
#    kernel (/boot/vmlinuz-*) and that ramdisk, boot (qemu, TCG), then
#    `pmucanary probe` (the open phase) on the device with two events under
#    perf-3.1 (OK, EINVAL and REJECTED cells), every cell a lava-test-case;
#  - the real `lava-run` runs it against a qemu device dictionary rendered
#    from lava-server's own device-type templates (unpacked, not installed);
#  - `pmucanary lava collect` turns lava-run's log into a run.json whose
#    every cell matches the case the job reported (result, outcome, k/n),
#    with the device's fingerprint (its kernel is the one booted);
#  - the same job as a server's REST export (built from the log's result
#    lines, metadata dumped with PyYAML as the server does): `collect
#    --export` with the log agrees, alone gives the same outcomes, and an
#    export that disagrees with the log is refused naming the case;
#  - `matrix` merges it with a local `probe` of the same specs;
#  - a device with only busybox fetches pmucanary (--pmucanary-url) from an
#    HTTP server here and POSTs run.json back (--artifact-url);
#  - a scenario on a device: its ramdisk mounts this host's root over 9p and
#    starts libvirtd there, `pmucanary run` boots a nested guest under the
#    device's KVM, a self-test crash comes back as GUEST_CRASH and a failed
#    case (about 2 min);
#  - a job whose kernel panics at boot (rdinit=/nonexistent) is collected as
#    INFRA (exit 125), no cell a verdict.
# Needs root, lava-dispatcher, busybox-static, python3-jinja2 (a
# lava-dispatcher dependency) and lava-server's .deb (apt-get download).
set -u
bin=${PMUCANARY_BIN:-build/pmucanary}
[ "$(id -u)" = 0 ] || { echo "SKIP: lava-run needs root"; exit 77; }
command -v lava-run >/dev/null || { echo "SKIP: lava-dispatcher is not installed"; exit 77; }
[ -x /bin/busybox ] || { echo "SKIP: /bin/busybox (busybox-static) is not installed"; exit 77; }
command -v jq >/dev/null || { echo "FAIL jq is not installed"; exit 1; }
kernel=$(ls /boot/vmlinuz-* 2>/dev/null | sort -V | tail -n 1)
[ -n "$kernel" ] || { echo "SKIP: no /boot/vmlinuz-* to boot"; exit 77; }
release=${kernel#/boot/vmlinuz-}

work=$(mktemp -d /var/tmp/it_lava.XXXXXX)
# lava-run keeps a job's files under /var/lib/lava/dispatcher/tmp/ID (a
# --validate run leaves its downloads there): ids of this run only, so
# that two runs of this suite stay apart, removed at the end.
id0=$(( ($$ % 100000) * 10 + 1000000 ))
cleanup() {
	local t=/var/lib/lava/dispatcher/tmp
	rm -rf "$work" "$t/$id0" "$t/$((id0 + 1))" "$t/$((id0 + 2))" "$t/$((id0 + 3))" "$t/$((id0 + 4))" \
		"$t/$((id0 + 5))"
}
[ -n "${IT_LAVA_KEEP:-}" ] || trap cleanup EXIT
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
ok() { echo "ok   $*"; }

# lava-server's device-type templates (base.jinja2, qemu.jinja2), from its
# package unpacked: the server itself is not needed.
(cd "$work" && apt-get download lava-server >/dev/null 2>&1) ||
	{ echo "SKIP: cannot download lava-server's package (apt-get download lava-server)"; exit 77; }
dpkg-deb -x "$work"/lava-server_*.deb "$work/srv" || { echo "FAIL dpkg-deb -x lava-server"; exit 1; }
types=$work/srv/usr/share/lava-server/device-types
[ -f "$types/qemu.jinja2" ] || { echo "FAIL no qemu.jinja2 in lava-server's package"; exit 1; }
# These machines' /dev/kvm cannot boot a stock kernel (platform.md): TCG.
render() { # NAME JINJA-LINE...: the device dictionary NAME.yaml
	local name=$1; shift
	printf '%s\n' "{% extends 'qemu.jinja2' %}" "{% set arch = 'amd64' %}" \
		"{% set no_kvm = True %}" "$@" >"$work/$name.jinja2"
	python3 - "$work" "$types" "$name.jinja2" >"$work/$name.yaml" <<'EOF'
import sys, jinja2
env = jinja2.Environment(loader=jinja2.FileSystemLoader([sys.argv[1], sys.argv[2]]))
print(env.get_template(sys.argv[3]).render())
EOF
}
render device "{% set memory = 1024 %}" || { echo "FAIL rendering the device"; exit 1; }
echo 'dispatcher_ip: 127.0.0.1' >"$work/dispatcher.yaml"

# The ramdisk: busybox, pmucanary and the libraries it links.
rd=$work/rd
mkdir -p "$rd"/{bin,proc,sys,dev,tmp,etc,lib64,usr/bin}
cp /bin/busybox "$rd/bin/"
cp "$bin" "$rd/usr/bin/pmucanary"
for l in $(ldd "$bin" | grep -o '/[^ ]*'); do
	mkdir -p "$rd$(dirname "$l")"
	cp -L "$l" "$rd$l"
done
cat >"$rd/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# the modules a device's ramdisk carries (rdmods), in load order
[ -f /mods/list ] && for m in $(cat /mods/list); do
	case $m in kvm-amd.ko) insmod /mods/$m nested=1 ;; *) insmod /mods/$m ;; esac
done
[ -e /proc/sys/kernel/perf_event_paranoid ] && echo -1 >/proc/sys/kernel/perf_event_paranoid
# what one device needs beyond this (sections 5b and 7)
[ -x /setup ] && /setup
exec setsid cttyhack sh -l
EOF
chmod +x "$rd/init"
cpiogz() { (cd "$1" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$2"; }
echo 'PS1="/ # "' >"$rd/etc/profile"
cpiogz "$rd" "$work/ramdisk.cpio.gz"

rdmods() { # DIR MODULE...: the modules and what they need, in load order, in DIR/mods
	local dir=$1 m f; shift
	mkdir -p "$dir/mods"
	for m in "$@"; do
		modprobe -S "$release" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
	done | awk '!seen[$0]++' | while read -r f; do
		cp "$f" "$dir/mods/" && basename "$f"
	done >"$dir/mods/list"
}
job() { # NAME EXTRA-ARGS...
	local name=$1; shift
	"$bin" lava job --device-type qemu --kernel "file://$kernel" \
		--ramdisk "file://$work/ramdisk.cpio.gz" --pmucanary-path /usr/bin/pmucanary \
		--probe-event cpu-clock --probe-event msr/tsc/ --probe-profile perf-3.1 \
		--timeout 10 --job-name "it-lava-$name" -o "$work/$name.yaml" "$@"
}
lava() { # NAME ID [DEVICE]: lava-run, its log in NAME.log
	local start=$SECONDS rc
	lava-run --job-id "$2" --output-dir "$work/out-$1" --device "$work/${3:-device}.yaml" \
		--dispatcher "$work/dispatcher.yaml" "$work/$1.yaml" >"$work/$1.log" 2>&1
	rc=$?
	echo "     lava-run $1: exit $rc, $((SECONDS - start)) s"
}

# 1. the job, as pmucanary writes it
job good || { fail "lava job exited $?"; exit 1; }
python3 -c 'import sys, yaml; j = yaml.safe_load(open(sys.argv[1])); assert j["device_type"] == "qemu"; assert [list(a)[0] for a in j["actions"]] == ["deploy", "boot", "test"]' \
	"$work/good.yaml" && ok "the job is YAML: deploy, boot, test" || fail "the job does not parse or lacks actions"
lava-run --validate --job-id $id0 --output-dir "$work/out-validate" --device "$work/device.yaml" \
	--dispatcher "$work/dispatcher.yaml" "$work/good.yaml" >"$work/validate.log" 2>&1 &&
	ok "lava-run --validate accepts it" || { fail "lava-run --validate: $(tail -3 "$work/validate.log")"; }

# 2. run it; collect
lava good $((id0 + 1))
"$bin" lava collect "$work/good.log" --json "$work/good.json"
rc=$?
[ "$rc" = 0 ] && ok "collect: exit 0" || { fail "collect exited $rc"; tail -5 "$work/good.log"; exit 1; }
cells=$(jq '.cells | length' "$work/good.json")
[ "$cells" -ge 100 ] && ok "collected $cells cells" || fail "collected $cells cells"
# every case the job reported, as LAVA recorded it: id, result, units, k
sed -n 's/^.*"lvl": "results", "msg": \(.*\)}$/\1/p' "$work/good.log" | sed 's/! "/"/g' |
	jq -r 'select(.definition | endswith("_pmucanary")) | select(.case != "pmucanary-exit")
	       | "\(.case) \(.result) \(.units) \(.measurement | tonumber | floor)"' | sort >"$work/cases.txt"
# the same from the collected run.json, through the documented encoding
jq -r '.cells[] | [.profile, .spec, .outcome, (.k // 0), (.n // 0)] | @tsv' "$work/good.json" |
	while IFS=$'\t' read -r p s o k n; do
		id=$(printf '%s__%s' "$(printf %s "$p" | od -An -tx1 -v | tr -d ' \n' | sed 's/../&\n/g' |
			while read -r h; do [ -n "$h" ] || continue; c=$(printf "\\x$h"); case $c in [A-Za-z0-9.-]) printf %s "$c";; *) printf '_%s' "${h^^}";; esac; done)" \
			"$(printf %s "$s" | od -An -tx1 -v | tr -d ' \n' | sed 's/../&\n/g' |
			while read -r h; do [ -n "$h" ] || continue; c=$(printf "\\x$h"); case $c in [A-Za-z0-9.-]) printf %s "$c";; *) printf '_%s' "${h^^}";; esac; done)")
		case $o in OK|E*) r=pass;; REJECTED|INFRA) r=skip;; *) r=fail;; esac
		u=$o; [ "$n" != 0 ] && u="$o/$n"
		echo "$id $r $u $k"
	done | sort >"$work/cells.txt"
if [ -s "$work/cases.txt" ] && cmp -s "$work/cases.txt" "$work/cells.txt"; then
	ok "every cell matches its case ($(wc -l <"$work/cases.txt") cases)"
else
	fail "cells and cases differ:"; diff "$work/cases.txt" "$work/cells.txt" | head -10
fi
[ "$(jq -r '[.cells[].outcome] | unique | join(",")' "$work/good.json")" = "EINVAL,OK,REJECTED" ] &&
	ok "outcomes OK, EINVAL, REJECTED" || fail "outcomes: $(jq -c '[.cells[].outcome] | unique' "$work/good.json")"
[ "$(jq -r .kernel "$work/good.json")" = "$release" ] &&
	[ "$(jq -r .host.kernel.release "$work/good.json")" = "$release" ] &&
	jq -e '.host.cpu.vendor and (.host.pmus | length > 0)' "$work/good.json" >/dev/null &&
	ok "the device's fingerprint: kernel $release, CPU, PMUs" ||
	fail "fingerprint: $(jq -c '{kernel, k: .host.kernel.release}' "$work/good.json")"
jq -e '.cells[] | select(.spec == "cpu-clock:u" and .profile == "perf-3.1" and .outcome == "OK")' \
	"$work/good.json" >/dev/null && ok "cpu-clock:u under perf-3.1 is OK on the device" ||
	fail "cpu-clock:u: $(jq -c '.cells[] | select(.spec == "cpu-clock:u")' "$work/good.json")"

# 2b. the same job as a LAVA server would export it: the REST API's page
# of test cases (lava_rest_app v02), each case's metadata the YAML the
# server stores of its result line (PyYAML, as the server dumps it)
python3 - "$work/good.log" >"$work/tests.json" <<'EOF' || fail "building the REST export"
import json, sys, yaml
cases = []
for line in open(sys.argv[1]):
    d = yaml.safe_load(line)
    if not isinstance(d, dict) or d.get("lvl") != "results":
        continue
    m = d["msg"]
    meas = m.get("measurement")
    cases.append({"id": len(cases) + 1, "name": m["case"], "result": m["result"],
                  "measurement": None if meas is None else "%.10f" % float(meas),
                  "unit": m.get("units", ""), "suite": 1 if m["definition"] == "lava" else 2,
                  "metadata": yaml.dump(m, default_flow_style=False),
                  "logged": d["dt"], "start_log_line": None, "end_log_line": None,
                  "test_set": None, "resource_uri": "http://lava.example/api/v0.2/jobs/1/tests/%d/" % (len(cases) + 1)})
json.dump({"count": len(cases), "next": None, "previous": None, "results": cases}, sys.stdout)
EOF
"$bin" lava collect --export "$work/tests.json" "$work/good.log" --json "$work/export-log.json" 2>"$work/err" &&
	cmp -s <(jq -S .cells "$work/good.json") <(jq -S .cells "$work/export-log.json") &&
	ok "--export with the log: they agree, the same cells ($(jq '.cells | length' "$work/export-log.json"))" ||
	fail "--export with the log: $(cat "$work/err")"
"$bin" lava collect --export "$work/tests.json" --json "$work/export.json" 2>"$work/err" &&
	[ "$(jq -c '[.cells[] | [.profile, .spec, .outcome, .k, .n]]' "$work/export.json")" = \
	  "$(jq -c '[.cells[] | [.profile, .spec, .outcome, .k, .n]]' "$work/good.json")" ] &&
	jq -e '.kernel | startswith("unknown")' "$work/export.json" >/dev/null &&
	ok "--export alone: the same outcomes, kernel $(jq -r .kernel "$work/export.json")" ||
	fail "--export alone: $(cat "$work/err") $(jq -c .kernel "$work/export.json")"
jq '(.results[] | select(.name == "perf-3.1__cpu-clock_3Au") | .result) = "fail"' "$work/tests.json" \
	>"$work/tests-bad.json"
"$bin" lava collect --export "$work/tests-bad.json" "$work/good.log" >/dev/null 2>"$work/err"
[ $? = 2 ] && grep -q 'perf-3.1__cpu-clock_3Au' "$work/err" &&
	ok "an export that disagrees with the log: exit 2 ($(cut -c1-150 "$work/err"))" ||
	fail "a disagreeing export: $(cat "$work/err")"

# 3. matrix merges it with a local probe of the same specs
"$bin" probe --event cpu-clock --event msr/tsc/ --profile perf-3.1 --json "$work/local.json" >/dev/null
"$bin" matrix --all "$work/local.json" "$work/good.json" >"$work/matrix.txt" 2>&1
rc=$?
[ "$rc" = 0 ] && ok "matrix of the local run and the LAVA device: exit 0" ||
	fail "matrix exited $rc: $(head -3 "$work/matrix.txt")"
[ "$(jq '.cells | length' "$work/local.json")" = "$cells" ] && ok "as many cells as the local probe" ||
	fail "local $(jq '.cells | length' "$work/local.json") vs device $cells cells"
grep -q "$release" "$work/matrix.txt" && ok "the matrix names the device's kernel" ||
	fail "the matrix lacks $release"
"$bin" diff "$work/local.json" "$work/good.json" >"$work/diff.txt"
rc=$?
[ "$rc" = 0 ] && ok "diff local -> device: no regression" || fail "diff exited $rc: $(head -5 "$work/diff.txt")"

# 4. a kernel that panics at boot: INFRA, never a verdict
# no /init to run: "No working init found", a panic (and no panic=-1,
# platform.md: the reboot would hide it)
job panic --kernel-args "rdinit=/nonexistent" || fail "lava job (panic) exited $?"
lava panic $((id0 + 2))
"$bin" lava collect "$work/panic.log" --json "$work/panic.json" 2>"$work/panic.err"
rc=$?
[ "$rc" = 125 ] && ok "a kernel panic at boot: collect exits 125 ($(cat "$work/panic.err"))" ||
	fail "panic job: collect exited $rc"
[ "$(jq '.cells | length' "$work/panic.json" 2>/dev/null)" = 0 ] &&
	[ "$(jq -r .lava.verdict "$work/panic.json")" = INFRA ] &&
	ok "INFRA: no cells, lava.verdict INFRA ($(jq -r '"\(.lava.error_type): \(.lava.error_msg)"' "$work/panic.json"))" ||
	fail "panic run.json: $(jq -c .lava "$work/panic.json" 2>&1)"

# 5. the tarball --pmucanary-url fetches runs pmucanary without the
# host's libraries in the way (a device has its own libc, or none)
top=${PMUCANARY_TOP:-.}
if bash "$top/guest-images/lava-bundle.sh" "$bin" "$work/pc.tgz" >/dev/null &&
	mkdir "$work/dev" && tar -C "$work/dev" -xzf "$work/pc.tgz" &&
	env -i "$work/dev/pmucanary-lava/pmucanary" lava cases "$work/good.json" >"$work/bundle.txt"; then
	[ "$(grep -c '^case ' "$work/bundle.txt")" = "$cells" ] &&
		ok "lava-bundle.sh: the bundled pmucanary prints every case" ||
		fail "the bundled pmucanary printed $(grep -c '^case ' "$work/bundle.txt") cases"
else
	fail "lava-bundle.sh or its launcher failed"
fi

# 5b. a device with nothing of ours on it: the job fetches that tarball
# (--pmucanary-url) and POSTs run.json back (--artifact-url), over the
# device's user network, from a small HTTP server here (10.0.2.2 is this
# host as QEMU's user network sees it).
mkdir -p "$work/www" "$work/rdmin"/{bin,proc,sys,dev,tmp,etc}
cp "$work/pc.tgz" "$work/www/pc.tgz" 2>/dev/null
cat >"$work/httpd.py" <<'PY'
import http.server, os, sys
root = sys.argv[1]
class H(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *a, **k):
        super().__init__(*a, directory=root, **k)
    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        with open(os.path.join(root, "posted" + self.path.replace("/", "_")), "wb") as f:
            f.write(self.rfile.read(n))
        self.send_response(201)
        self.end_headers()
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
with open(os.path.join(root, "port"), "w") as f:
    f.write(str(s.server_address[1]))
s.serve_forever()
PY
python3 "$work/httpd.py" "$work/www" &
httpd=$!
for _ in $(seq 50); do [ -s "$work/www/port" ] && break; sleep 0.1; done
port=$(cat "$work/www/port" 2>/dev/null)
cp /bin/busybox "$work/rdmin/bin/"
cp "$rd/init" "$work/rdmin/init"
cp "$rd/etc/profile" "$work/rdmin/etc/"
# the distribution kernel's virtio-net is a module: the ramdisk loads it
rdmods "$work/rdmin" virtio_pci virtio_net
printf '#!/bin/sh\n%s\n' "ifconfig eth0 10.0.2.15 netmask 255.255.255.0 up && route add default gw 10.0.2.2" \
	>"$work/rdmin/setup"
chmod +x "$work/rdmin/setup"
cpiogz "$work/rdmin" "$work/rdmin.cpio.gz"
if [ -n "$port" ] && [ -s "$work/www/pc.tgz" ]; then
	"$bin" lava job --device-type qemu --kernel "file://$kernel" \
		--ramdisk "file://$work/rdmin.cpio.gz" --pmucanary-url "http://10.0.2.2:$port/pc.tgz" \
		--artifact-url "http://10.0.2.2:$port/run.json" \
		--probe-event cpu-clock --probe-profile perf-3.1 \
		--timeout 10 --job-name it-lava-url -o "$work/url.yaml" || fail "lava job (url) exited $?"
	lava url $((id0 + 3))
	"$bin" lava collect "$work/url.log" --json "$work/url.json"
	rc=$?
	[ "$rc" = 0 ] && ok "a bare device: pmucanary fetched over HTTP, collect exit 0" ||
		fail "url job: collect exited $rc: $(grep -o '"msg": "[^"]*wget[^"]*"' "$work/url.log" | head -3)"
	posted=$work/www/posted_run.json
	if [ -s "$posted" ] && jq -e . "$posted" >/dev/null 2>&1; then
		[ "$(jq -c '[.cells[] | [.profile, .spec, .outcome]] | sort' "$posted")" = \
		  "$(jq -c '[.cells[] | [.profile, .spec, .outcome]] | sort' "$work/url.json")" ] &&
			ok "the run.json POSTed by the device has the collected cells ($(jq '.cells | length' "$posted"))" ||
			fail "POSTed run.json and the collected one differ"
		grep -q '"pmucanary-run-json"' "$work/url.log" && ok "the job references it (lava-test-reference)" ||
			fail "no pmucanary-run-json reference in the log"
	else
		fail "the device POSTed no run.json"
	fi
else
	fail "no HTTP server or no tarball for the url job"
fi
kill "$httpd" 2>/dev/null; wait "$httpd" 2>/dev/null

# 7. a scenario on a device: `pmucanary run` boots a nested guest there.
# The device is what a lab would give a pmucanary job: a machine with
# libvirt and QEMU. Here it is a qemu device (TCG, 'max' CPU with SVM and
# without xsave, as lib/guests/fleet.c gives lab hosts) whose ramdisk mounts this
# host's root read-only over virtio-9p under a tmpfs overlay, loads kvm_amd
# with nested=1, starts libvirtd in it, and runs this pmucanary there
# (/usr/bin/pmucanary chroots). The guest runs under the device's own KVM.
# The wrapper adds a self-test harm, so that the run finds harm: a case
# that fails, and a device whose pmucanary exits 1 (LAVA's run.sh has set -e).
render devlab "{% set memory = 2048 %}" \
	"{% set extra_options = ['-smp 1', '-cpu max,xsave=off', '-virtfs local,path=/,mount_tag=pcroot,security_model=none,readonly=on'] %}" ||
	fail "rendering the lab device"
"$bin" image >/dev/null || fail "pmucanary image (the nested guests' initramfs)"
rl=$work/rdlab
mkdir -p "$rl"/{bin,proc,sys,dev,tmp,etc,usr/bin}
cp /bin/busybox "$rl/bin/"
cp "$rd/init" "$rl/init"
rdmods "$rl" virtio_pci 9pnet_virtio 9p overlay kvm_amd
cp "$rd/etc/profile" "$rl/etc/"
cat >"$rl/setup" <<'EOF'
#!/bin/sh
mkdir -p /lower /rw /root2 /dev/pts /dev/shm
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,ro pcroot /lower
mount -t tmpfs -o mode=0755 tmpfs /rw
mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work overlay /root2
mount -t proc proc /root2/proc
mount -t sysfs sysfs /root2/sys
mount -t cgroup2 cgroup2 /root2/sys/fs/cgroup
mount -t devtmpfs devtmpfs /root2/dev
mount -t devpts -o gid=5,mode=0620,ptmxmode=0666 devpts /root2/dev/pts
mount -t tmpfs -o mode=1777 tmpfs /root2/dev/shm
mount -t tmpfs -o mode=0755 tmpfs /root2/run
mkdir -p /root2/run/lock && chmod 1777 /root2/run/lock
mount --bind /tmp /root2/tmp
for d in /root2/etc/libvirt/qemu/autostart /root2/etc/libvirt/qemu/networks/autostart \
	/root2/etc/libvirt/storage/autostart; do
	[ -d $d ] && mount -t tmpfs tmpfs $d
done
chown 0:$(grep '^kvm:' /root2/etc/group | cut -d: -f3) /dev/kvm && chmod 0660 /dev/kvm
# libvirt's private /dev for each QEMU misses /dev/kvm in this chroot:
# QEMU uses the chroot's /dev (the overlay's qemu.conf, not this host's)
echo "namespaces = []" >>/root2/etc/libvirt/qemu.conf
chroot /root2 /usr/sbin/virtlogd -d
chroot /root2 /usr/sbin/libvirtd -d
EOF
cat >"$rl/usr/bin/pmucanary" <<EOF
#!/bin/sh
# this host's pmucanary, in this host's root; libvirtd's first answer waits
# for its QEMU probe
for i in \$(seq 120); do
	chroot /root2 /usr/bin/virsh -c qemu:///system version >/dev/null 2>&1 && break; sleep 1
done
# the test's self-test harm: a crash whenever cpu-clock:u is armed
[ "\$1" = run ] && { shift; set -- run --selftest-harm cpu-clock:u=crash "\$@"; }
exec chroot /root2 $(readlink -f "$bin") "\$@"
EOF
chmod +x "$rl/setup" "$rl/usr/bin/pmucanary"
cpiogz "$rl" "$work/rdlab.cpio.gz"
cat >"$work/device-run.ini" <<'EOF'
[scenario]
name = lava-device
description = the open phase and one nested guest on a LAVA device
[fleet]
guests = 1
vcpus = 1
memory = 256M
heartbeat = 500ms
# a loaded 2-CPU machine starves a nested guest for seconds: only the
# crash is under test here
heartbeat_timeout = 60s
# TCG under TCG: a nested boot takes 25-60 s
boot_timeout = 180s
[sweep]
events = cpu-clock
modifiers = -; u
profiles = perf-modern
[load]
dwell = 1s
confirm = 1
EOF
# The device runs through `pmucanary lab --place lava`: the lab writes the
# job, runs it with lava-run here, collects its log into the kernel's
# run.json and reports as for a lab host. The test takes about 2 min; 6 is
# its timeout.
labrun() { # N: a lab over the device; its directory in $labdir
	local start=$SECONDS
	rm -rf "$work/labs$1"
	mkdir -p "$work/labs$1"
	"$bin" lab --place lava --place-opt "device=$work/devlab.yaml" \
		--place-opt "ramdisk=$work/rdlab.cpio.gz" --place-opt "dispatcher=$work/dispatcher.yaml" \
		--place-opt pmucanary_path=/usr/bin/pmucanary --place-opt timeout=6 \
		--kernel "$kernel:device" --results "$work/labs$1" "$work/device-run.ini" \
		>"$work/lab$1.out" 2>"$work/scenario.err"
	rc=$?
	labdir=$(ls -d "$work/labs$1"/lab-* 2>/dev/null | head -1)
	cp "$labdir/device/lava-1.log" "$work/scenario.log" 2>/dev/null
	cp "$labdir/device/lava-1.run/run.json" "$work/scenario.json" 2>/dev/null ||
		echo '{"cells": []}' >"$work/scenario.json"
	echo "     lab --place lava ($1): exit $rc, $((SECONDS - start)) s"
}
labrun 1
# An emulated device can stall its own kernel under a loaded host (with two
# TCG CPUs: RCU stalls, a timer that never fired, in 3 of 8 runs here; so
# the device has one): the LAVA job fails (timeout, an error type) and the
# lab says INFRA. That is the emulated device, not pmucanary: run the lab
# once more, and say so. Only then: the error type is a timeout or the
# device's infrastructure (never Job, Test, Bug, Configuration or Canceled:
# those name a job or a harness that is wrong), and pmucanary never
# reported its exit (a job that finished and reported is never run again).
# The device console's stall lines, if any, are shown.
if [ "$rc" = 125 ]; then
	why=$(jq -r '.kernels[0].why // "" | .[0:200]' "$labdir/lab.json" 2>/dev/null)
	err_type=$(printf '%s' "$why" | sed -n 's/.*error type \([A-Za-z]*\).*/\1/p')
	if [[ $err_type != LAVATimeout && $err_type != Infrastructure ]]; then
		fail "lab --place lava: INFRA ($why): not a device stall, not run again"
	elif grep '"lvl": "results"' "$work/scenario.log" | grep -qE '"case": (! )?"pmucanary-exit"'; then
		fail "lab --place lava: the job failed ($why) after pmucanary reported its exit: not run again"
	else
		stall=$(grep -aoE 'rcu: INFO: [^"]{0,60}|self-detected stall[^"]{0,40}|soft lockup[^"]{0,40}|clocksource[^"]{0,60}unstable' \
			"$work/scenario.log" | head -2 | tr '\n' ';')
		echo "     the device failed ($why) before pmucanary reported its exit;" \
			"device console: ${stall:-no stall message}: once more"
		labrun 2
	fi
fi
[ "$rc" = 1 ] && ok "lab --place lava: exit 1 (the kernel harmed a guest)" ||
	fail "lab --place lava exited $rc: $(cat "$work/scenario.err" | tail -3) $(cat "$work/lab"*.out | tail -3)"
[ "$(jq -r '.kernels[0].status' "$labdir/lab.json" 2>/dev/null)" = harm ] &&
	[ "$(jq -r '.kernels[0].boots' "$labdir/lab.json")" = 1 ] &&
	ok "lab.json: the kernel is harm, one LAVA job" ||
	fail "lab.json: $(jq -c '.kernels[0]' "$labdir/lab.json" 2>&1 | head -c 400)"
grep -q '^device (' "$labdir/matrix.txt" 2>/dev/null &&
	ok "the lab's matrix has the device's row, under the lab's kernel name" ||
	fail "matrix.txt: $(head -5 "$labdir/matrix.txt" 2>&1)"
jq -e '[.limitations[] | select(startswith("lab: this run ran on a LAVA device"))] | length == 1' \
	"$work/scenario.json" >/dev/null && ok "run.json says it ran on a LAVA device" ||
	fail "no LAVA-device limitation in the kernel's run.json"
[ -z "$(ls /var/lib/lava/dispatcher/tmp 2>/dev/null | grep -E '^3[0-9]{6}$')" ] &&
	ok "the lab removed lava-run's job directory" || fail "lava-run's job directory was left"
[ "$(jq -r '[.cells[] | "\(.spec)=\(.outcome) \(.k // 0)/\(.n // 0)"] | sort | join(",")' "$work/scenario.json")" = \
  "cpu-clock:u=GUEST_CRASH 1/1,cpu-clock=OK 0/0" ] &&
	ok "cells: cpu-clock OK, cpu-clock:u GUEST_CRASH 1/1 (the device's nested guest crashed)" ||
	fail "scenario cells: $(jq -c '[.cells[] | [.spec, .outcome, .k, .n]]' "$work/scenario.json")"
[ "$(jq -r .accel "$work/scenario.json")" = kvm ] && [ "$(jq -r .kernel "$work/scenario.json")" = "$release" ] &&
	ok "the device ran its guest under its own KVM, kernel $release" ||
	fail "accel/kernel: $(jq -c '{accel, kernel}' "$work/scenario.json")"
jq -e '[.limitations[] | select(test("SELF-TEST"))] | length == 1' "$work/scenario.json" >/dev/null &&
	ok "run.json says the harm was a self-test" || fail "no SELF-TEST limitation in the collected run.json"
jq -e '.host.cpu.hypervisor and any(.limitations[]; startswith("accel is kvm inside a virtual machine"))' \
	"$work/scenario.json" >/dev/null &&
	ok "run.json says its KVM is nested in a virtual machine (the device runs under TCG)" ||
	fail "no nested-KVM limitation: $(jq -c '{h: .host.cpu.hypervisor, l: .limitations}' "$work/scenario.json")"
sed -n 's/^.*"lvl": "results", "msg": \(.*\)}$/\1/p' "$work/scenario.log" | sed 's/! "/"/g' |
	jq -r 'select(.definition | endswith("_pmucanary")) | "\(.case) \(.result) \(.measurement | tonumber | floor)"' |
	sort >"$work/scenario-cases.txt"
printf '%s\n' "perf-modern__cpu-clock pass 0" "perf-modern__cpu-clock_3Au fail 1" \
	"pmucanary-exit pass 1" | sort | cmp -s - "$work/scenario-cases.txt" &&
	ok "cases: cpu-clock pass, cpu-clock:u fail, pmucanary exit 1 reported" ||
	fail "scenario cases: $(tr '\n' ';' <"$work/scenario-cases.txt")"

# 6. bad input to both commands
"$bin" lava job --device-type bogus --kernel "file://$kernel" --ramdisk "file://$work/ramdisk.cpio.gz" \
	--probe-event cpu-clock >/dev/null 2>"$work/err"
[ $? = 2 ] && [ "$(wc -l <"$work/err")" = 1 ] && ok "unknown device type: exit 2, one line" || fail "bogus device type"
head -c 3000 "$work/good.log" >"$work/trunc.log"
"$bin" lava collect "$work/trunc.log" >/dev/null 2>"$work/err"
[ $? = 2 ] && grep -q "trunc.log:" "$work/err" && ok "truncated log: exit 2 ($(cat "$work/err"))" ||
	fail "truncated log: $(cat "$work/err")"

[ "$fails" = 0 ] || { echo "$fails failures"; exit 1; }
echo "all passed"
