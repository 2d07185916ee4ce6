#!/bin/bash
# Build the "demo desktop" guest image: a Debian kernel + busybox initramfs (about 13 MB).
#
#   scripts/guest/build-demo-guest.sh OUT_DIR
#
# Outputs in OUT_DIR: demo-disk.qcow2 (BIOS + syslinux, boots on its own), demo.iso (isolinux, hybrid),
# vmlinuz, initrd.img. Recipe and measurements: /work/shared/reference/guest-image.md (Appendix B).
#
# - Idempotent: exits 0 at once when demo-disk.qcow2 and demo.iso already exist.
# - Safe to run concurrently: an flock on OUT_DIR/.build.lock serialises builders.
# - Atomic: everything is built in a temporary work dir, then copied next to the target under a
#   temporary name and renamed, so a reader never sees a half-written image.
# - Needs no mount, no loop device and no root for the build itself; root is only used to apt-get
#   missing build tools. Kernel and busybox come from the Debian archive via `apt-get download`.
#
# Both variants run QEMU's guest agent (qemu-ga, from this machine's qemu-guest-agent package) on the
# virtio-serial port named org.qemu.guest_agent.0 when the machine has one: the portal sends and fetches
# files through it (guest-file-*, a listing with guest-exec) in the transfer folder /srv/Transfer
# (world-writable, sticky).
#
# On boot the guest writes `DEMO-DESKTOP READY ip=<cidr|none> boot=<n (on dev)|no disk> uptime=<s>`
# to ttyS0: that line is the readiness marker the engine and its tests wait for.
#
# Variants (GUEST_VARIANT): `demo` (default, the above) or `rdp`, the "Debian desktop (RDP)" guest:
# the same kernel and busybox base plus what scripts/guest/rdp-root.sh adds (xrdp, Xvnc, xterm), in
# OUT_DIR/rdp-disk.qcow2 only. Each output set carries a stamp of the scripts that made it
# (<variant>.stamp): a changed script makes it again.
set -euo pipefail
export PATH=$PATH:/usr/sbin:/sbin
export LC_ALL=C

OUT=${1:?usage: $0 OUT_DIR}
DISK_MB=${DISK_MB:-64}
VARIANT=${GUEST_VARIANT:-demo}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
case "$VARIANT" in
  demo) OUTPUTS="vmlinuz initrd.img demo.iso demo-disk.qcow2"; EXTRA_ROOT=""; EXTRA_MODS="" ;;
  rdp) OUTPUTS="rdp-disk.qcow2"; EXTRA_ROOT="$HERE/rdp-root.sh"; EXTRA_MODS="qemu_fw_cfg" ;;
  *) echo "unknown GUEST_VARIANT $VARIANT" >&2; exit 2 ;;
esac
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
STAMP=$(cat "$HERE/build-demo-guest.sh" ${EXTRA_ROOT:+"$EXTRA_ROOT"} | sha256sum | cut -c1-16)

have_outputs() {
  for f in $OUTPUTS; do [ -s "$OUT/$f" ] || return 1; done
  [ "$(cat "$OUT/$VARIANT.stamp" 2>/dev/null)" = "$STAMP" ]
}
have_outputs && exit 0

# One builder at a time per OUT_DIR; a second one waits, then finds the outputs and leaves.
exec 9>"$OUT/.build-$VARIANT.lock"
flock 9
have_outputs && exit 0

T0=$(date +%s)
t() { echo "[$(($(date +%s) - T0))s] $*"; }

# --- 0. build tools (file that must exist -> Debian package that provides it) ---------------------
declare -A NEED=(
  [/usr/bin/qemu-img]=qemu-utils
  [/usr/bin/syslinux]=syslinux
  [/usr/lib/syslinux/mbr/mbr.bin]=syslinux-common
  [/usr/lib/syslinux/modules/bios/ldlinux.c32]=syslinux-common
  [/usr/lib/ISOLINUX/isolinux.bin]=isolinux
  [/usr/lib/ISOLINUX/isohdpfx.bin]=isolinux
  [/usr/bin/mcopy]=mtools
  [/usr/sbin/mkfs.vfat]=dosfstools
  [/usr/sbin/sfdisk]=fdisk
  [/usr/bin/xorriso]=xorriso
  [/usr/bin/cpio]=cpio
  [/usr/sbin/depmod]=kmod
  [/usr/sbin/dropbear]=dropbear-bin
  [/usr/bin/openssl]=openssl
  [/usr/sbin/qemu-ga]=qemu-guest-agent
)
MISSING=()
for f in "${!NEED[@]}"; do
  # usrmerge: /usr/sbin/x may live in /sbin on older layouts
  [ -e "$f" ] || [ -e "${f#/usr}" ] || MISSING+=("${NEED[$f]}")
done
if [ ${#MISSING[@]} -gt 0 ]; then
  PKGS=$(printf '%s\n' "${MISSING[@]}" | sort -u | tr '\n' ' ')
  if [ "$(id -u)" != 0 ]; then
    echo "missing build packages: $PKGS(run as root, or: apt-get install --no-install-recommends $PKGS)" >&2
    exit 1
  fi
  t "installing $PKGS"
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends $PKGS >/dev/null
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/demo-guest.XXXXXX")
cleanup() { rm -rf "$WORK"; rm -f "$OUT"/.*.tmp.$$; }
trap cleanup EXIT
trap 'exit 130' INT TERM HUP   # make signals run the EXIT trap too: no temp dirs left behind
mkdir -p "$WORK/debs" "$WORK/x" "$WORK/out"
B=$WORK/out   # build outputs, published at the end

# --- 1. kernel + busybox from the Debian archive (nothing is installed into the host) -------------
kernel_pkg() { apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/{print $2; exit}'; }
KPKG=$(kernel_pkg || true)
if [ -z "$KPKG" ] && [ "$(id -u)" = 0 ]; then
  apt-get -o DPkg::Lock::Timeout=600 update -qq   # a fresh machine may have no package lists yet
  KPKG=$(kernel_pkg || true)
fi
[ -n "$KPKG" ] || { echo "cannot resolve linux-image-amd64 (apt-get update?)" >&2; exit 1; }
KV=${KPKG#linux-image-}
# apt-get download as root warns that it cannot drop privileges to _apt in a private dir: harmless
( cd "$WORK/debs" && apt-get download -q "$KPKG" busybox-static >"$WORK/download.log" 2>&1 ) \
  || { cat "$WORK/download.log" >&2; exit 1; }
for d in "$WORK"/debs/*.deb; do dpkg-deb -x "$d" "$WORK/x"; done
t "downloaded and unpacked $KPKG + busybox-static"

# --- 2. root filesystem of the initramfs -------------------------------------------------------------
R=$WORK/root
mkdir -p "$R"/{bin,sbin,etc/init.d,etc/acpi/PWRF,etc/dropbear,proc,sys,dev,tmp,run,root,home/demo,www,data,var/log,usr/bin,usr/sbin,lib/modules}
cp "$WORK/x/bin/busybox" "$R/bin/busybox"
for a in $("$R/bin/busybox" --list); do [ -e "$R/bin/$a" ] || ln -s busybox "$R/bin/$a"; done
ln -s bin/busybox "$R/init"

# Kernel modules, in dependency order: NICs (e1000, virtio-net), disks (ata_piix, ahci, virtio-blk/scsi),
# file systems (vfat needs nls_ascii: Debian's default FAT iocharset), the ACPI power button (+evdev) so that
# QMP system_powerdown shuts the guest down, and virtio-rng for early entropy.
MODS="e1000 virtio_net virtio_pci virtio_blk virtio_scsi ata_piix ahci sd_mod sr_mod vfat nls_cp437 nls_ascii nls_iso8859-1 ext4 isofs virtio_rng button evdev virtio_console $EXTRA_MODS"
depmod -b "$WORK/x" "$KV"
for m in $MODS; do modprobe -d "$WORK/x" -S "$KV" --show-depends "$m"; done \
  | awk '$1=="insmod"{print $2}' | awk '!s[$0]++' > "$WORK/mods"
while read -r ko; do
  rel=${ko#"$WORK/x/lib/modules/$KV/"}
  mkdir -p "$R/lib/modules/$(dirname "$rel")"
  cp "$ko" "$R/lib/modules/$rel"
  echo "$rel"
done < "$WORK/mods" > "$R/etc/modules.order"

# dropbear is dynamically linked: copy the host's binary and the libraries ldd names (both Debian 12)
cp /usr/sbin/dropbear "$R/usr/sbin/"
for l in $(ldd /usr/sbin/dropbear | grep -o '/[^ ]*'); do mkdir -p "$R$(dirname "$l")"; cp -L "$l" "$R$l"; done
mkdir -p "$R/lib64" && cp -L /lib64/ld-linux-x86-64.so.2 "$R/lib64/"

# --- guest agent: qemu-ga and the libraries ldd names (glib, udev, numa, uring; both Debian 12) -----
cp /usr/sbin/qemu-ga "$R/usr/sbin/"
for l in $(ldd /usr/sbin/qemu-ga | grep -o '/[^ ]*'); do [ -e "$R$l" ] || { mkdir -p "$R$(dirname "$l")"; cp -L "$l" "$R$l"; }; done
mkdir -p "$R/usr/local/sbin"
# busybox's mdev makes no /dev/virtio-ports/<name> links: find the port by its name in sysfs. A machine
# without the port: the script waits (init would respawn an agent that exits at once, in a loop).
cat > "$R/usr/local/sbin/guest-agent" <<'EOF'
#!/bin/sh
while :; do
  for n in /sys/class/virtio-ports/*/name; do
    [ "$(cat "$n" 2>/dev/null)" = org.qemu.guest_agent.0 ] || continue
    P=/dev/$(basename "$(dirname "$n")")
    [ -c "$P" ] || mdev -s
    exec /usr/sbin/qemu-ga -m virtio-serial -p "$P" -f /run/qemu-ga.pid -t /run
  done
  sleep 5
done
EOF
chmod 755 "$R/usr/local/sbin/guest-agent"
# --- end guest agent ------------------------------------------------------------------------------

# --- vpn-bastion: a TLS web server on 443 for the bastion's HTTPS route (openssl s_server; its key is
# made at each boot, see rcS). The host's openssl and the libraries ldd names (both Debian 12). -------
cp /usr/bin/openssl "$R/usr/bin/openssl"
for l in $(ldd /usr/bin/openssl | grep -o '/[^ ]*'); do mkdir -p "$R$(dirname "$l")"; cp -L "$l" "$R$l"; done
mkdir -p "$R/usr/lib/ssl" && printf '[req]\ndistinguished_name=dn\n[dn]\n' > "$R/usr/lib/ssl/openssl.cnf"
# --- end vpn-bastion ------------------------------------------------------------------------------

# users: root/demo and demo/demo (fixed salt: the image is reproducible and the password is public anyway)
H=$(openssl passwd -6 -salt demodemo demo)
printf 'root:x:0:0:root:/root:/bin/sh\ndemo:x:1000:1000:demo:/home/demo:/bin/sh\n' > "$R/etc/passwd"
printf 'root:%s:19000:0:99999:7:::\ndemo:%s:19000:0:99999:7:::\n' "$H" "$H" > "$R/etc/shadow"
chmod 600 "$R/etc/shadow"
printf 'root:x:0:\ndemo:x:1000:\n' > "$R/etc/group"
printf '/bin/sh\n' > "$R/etc/shells"
echo demo-desktop > "$R/etc/hostname"

cat > "$R/etc/inittab" <<'EOF'
::sysinit:/etc/init.d/rcS
::respawn:/usr/local/sbin/guest-agent
tty1::respawn:/bin/getty 38400 tty1
ttyS0::respawn:/bin/getty -L 115200 ttyS0 vt100
::ctrlaltdel:/bin/reboot
::shutdown:/etc/init.d/rcK
EOF

cat > "$R/etc/init.d/rcS" <<'EOF'
#!/bin/sh
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev 2>/dev/null
mkdir -p /dev/pts; mount -t devpts devpts /dev/pts; mount -t tmpfs tmp /tmp; mount -t tmpfs run /run
hostname -F /etc/hostname
chown 1000:1000 /home/demo
while read -r m; do insmod /lib/modules/$m 2>/dev/null; done < /etc/modules.order
mdev -s 2>/dev/null
ip link set lo up
IF=$(ls /sys/class/net | grep -v '^lo$' | head -n1)
IP=none
if [ -n "$IF" ]; then
  # A few seconds in the foreground (the banner shows the address), then on in the background until a
  # lease comes: a guest whose only NIC is the private one may ask before its server answers.
  udhcpc -i "$IF" -s /etc/udhcpc.sh -t 5 -T 1 -A 2 -b -q >/dev/null 2>&1
  IP=$(ip -4 -o addr show "$IF" | awk '{print $4}'); IP=${IP:-none}
fi
# --- guest network: the other NICs (the private `wireguard` one) ask for their lease in the
# background, so that the boot does not wait for them; the portal reads the address from its DHCP server.
for N in $(ls /sys/class/net | grep -v '^lo$' | grep -vx "$IF"); do
  udhcpc -i "$N" -s /etc/udhcpc.sh -t 20 -T 1 -A 2 -b -q >/dev/null 2>&1
done
# --- end guest network
# persistent storage: the FAT partition labelled DEMOBOOT, keeps a boot counter (shows that the overlay is written)
BOOTS="no disk"; D=""
for i in 1 2 3 4 5; do D=$(findfs LABEL=DEMOBOOT 2>/dev/null) && break; D=""; sleep 0.2; done
if [ -n "$D" ] && mount -o rw "$D" /data 2>/dev/null; then
  N=$(cat /data/bootcount 2>/dev/null || echo 0); N=$((N+1)); echo $N > /data/bootcount; sync; BOOTS="$N (on $D)"
fi
echo "<h1>demo desktop</h1><p>host $(hostname), boot $BOOTS</p>" > /www/index.html
httpd -p 80 -h /www
dropbear -R -p 22 -E 2>/var/log/dropbear.log
acpid -c /etc/acpi 2>/dev/null
# --- vpn-bastion: HTTPS on 443 (serves /www: https://<host>/index.html), with a key made now, in the
# background so that the boot does not wait for it ---
( cd /www && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
    -subj /CN=demo-desktop -keyout /run/tls.key -out /run/tls.crt >/dev/null 2>&1 \
  && exec openssl s_server -quiet -accept 443 -cert /run/tls.crt -key /run/tls.key -WWW >/dev/null 2>&1 ) &
# --- end vpn-bastion ---
printf "\033c" > /dev/tty1
cat > /etc/issue <<EOI

  ##################################################
  #                                                #
  #           d e m o   d e s k t o p              #
  #                                                #
  ##################################################

  host: \n    ip: $IP    boot: $BOOTS
  services: httpd :80, ssh :22 (dropbear)
  login: demo / demo   (root / demo)

EOI
echo "DEMO-DESKTOP READY ip=$IP boot=$BOOTS uptime=$(cut -d' ' -f1 /proc/uptime)" > /dev/ttyS0 2>/dev/null
EOF

cat > "$R/etc/init.d/rcK" <<'EOF'
#!/bin/sh
echo "DEMO-DESKTOP SHUTDOWN" > /dev/ttyS0 2>/dev/null
killall dropbear httpd 2>/dev/null; sync; umount /data 2>/dev/null
EOF

cat > "$R/etc/udhcpc.sh" <<'EOF'
#!/bin/sh
case "$1" in
  deconfig) ip addr flush dev "$interface"; ip link set "$interface" up ;;
  bound|renew)
    ifconfig "$interface" "$ip" netmask "${subnet:-255.255.255.0}"
    [ -n "$router" ] && route add default gw "${router%% *}" dev "$interface"
    # a lease without DNS servers (the private network's) keeps those of the other NIC
    if [ -n "$dns" ]; then : > /etc/resolv.conf; for d in $dns; do echo "nameserver $d" >> /etc/resolv.conf; done; fi ;;
esac
exit 0
EOF
printf '#!/bin/sh\npoweroff\n' > "$R/etc/acpi/PWRF/00000080"
chmod 755 "$R/etc/init.d/rcS" "$R/etc/init.d/rcK" "$R/etc/udhcpc.sh" "$R/etc/acpi/PWRF/00000080"

# The variant's own additions to the root (they may replace rcS): R, WORK, KV are set.
if [ -n "$EXTRA_ROOT" ]; then
  # shellcheck source=/dev/null
  . "$EXTRA_ROOT"
  t "$VARIANT additions in place"
fi
# the guest agent's transfer folder (the portal's files panel), in both variants
mkdir -p "$R/srv/Transfer" && chmod 1777 "$R/srv/Transfer"

( cd "$R" && find . | cpio -o -H newc -R 0:0 --quiet | gzip -9 > "$B/initrd.img" )
cp "$WORK/x/boot/vmlinuz-$KV" "$B/vmlinuz"
t "initramfs $(du -h "$B/initrd.img" | cut -f1), kernel $(du -h "$B/vmlinuz" | cut -f1)"

# no_timer_check: the kernel does not test the timer's interrupt through the IO-APIC at boot; on TCG under load (30
# guests booting on 2 cores) that test fails and the kernel panics ("IO-APIC + timer doesn't work").
CMDLINE="console=tty0 console=ttyS0,115200 quiet no_timer_check"
printf 'DEFAULT demo\nPROMPT 0\nTIMEOUT 0\nLABEL demo\n  LINUX /vmlinuz\n  INITRD /initrd.img\n  APPEND %s\n' \
  "$CMDLINE" > "$WORK/syslinux.cfg"

# --- 3. bootable disk without mounting: FAT partition image + syslinux (mtools) + MBR -> qcow2 ---------
P=$WORK/part.img; DISK=$WORK/disk.raw
truncate -s $((DISK_MB - 1))M "$P"
mkfs.vfat -n DEMOBOOT "$P" >/dev/null
mcopy -i "$P" "$B/vmlinuz" "$B/initrd.img" "$WORK/syslinux.cfg" ::/
syslinux --install "$P"
truncate -s "${DISK_MB}M" "$DISK"
echo 'start=2048, type=c, bootable' | sfdisk -q "$DISK"
dd if=/usr/lib/syslinux/mbr/mbr.bin of="$DISK" bs=440 count=1 conv=notrunc status=none
dd if="$P" of="$DISK" bs=1M seek=1 conv=notrunc,sparse status=none
qemu-img convert -f raw -O qcow2 -c "$DISK" "$B/$VARIANT-disk.qcow2"
t "disk $(du -h "$B/$VARIANT-disk.qcow2" | cut -f1)"

# --- 4. bootable ISO (isolinux, hybrid: also boots as a hard disk or USB stick) ----------------------
if [ "$VARIANT" = demo ]; then
I=$WORK/iso; mkdir -p "$I/isolinux"
cp /usr/lib/ISOLINUX/isolinux.bin /usr/lib/syslinux/modules/bios/ldlinux.c32 "$I/isolinux/"
cp "$B/vmlinuz" "$B/initrd.img" "$I/"
cp "$WORK/syslinux.cfg" "$I/isolinux/isolinux.cfg"
xorriso -as mkisofs -quiet -o "$B/demo.iso" -V DEMO_ISO -J -R \
  -b isolinux/isolinux.bin -c isolinux/boot.cat -no-emul-boot -boot-load-size 4 -boot-info-table \
  -isohybrid-mbr /usr/lib/ISOLINUX/isohdpfx.bin "$I" 2>"$WORK/xorriso.log" \
  || { cat "$WORK/xorriso.log" >&2; exit 1; }
t "iso $(du -h "$B/demo.iso" | cut -f1)"
fi

# --- 5. publish: copy under a temporary name in OUT (same file system), then rename -----------------
# The disk goes last, then the stamp: their presence is what marks the build as complete.
rm -f "$OUT/$VARIANT.stamp"
for f in $OUTPUTS; do
  cp "$B/$f" "$OUT/.$f.tmp.$$"
  mv -f "$OUT/.$f.tmp.$$" "$OUT/$f"
done
echo "$STAMP" > "$OUT/$VARIANT.stamp"
t "done: $OUT"
