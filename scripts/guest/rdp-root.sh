# Sourced by build-demo-guest.sh for GUEST_VARIANT=rdp: turns the demo guest's root ($R) into the
# "Debian desktop (RDP)" guest. xrdp with TigerVNC's Xvnc (autorun=Xvnc) and a light X session (xclock
# and an xterm; xclip for the clipboard), taken from this machine's Debian packages (xrdp, tigervnc-standalone-server, xterm,
# x11-apps, xkb-data, libpam-modules, openssl) with the libraries ldd names, as the demo guest takes dropbear.
#
# At boot: DHCP on every NIC; the desktop's guest credentials from QEMU's fw_cfg
# (opt/org.vdiportal/credentials: base64 user name and password, one a line; default isard/pirineus)
# become a user with that password before xrdp starts; xrdp's keys are made once per desktop and
# kept on its disk. The session's terminal copies each line typed into it to the serial console
# (`RDP-TYPED <line>`) and a session's start as `RDP-SESSION started user=<name>`, which lets tests
# see that sign-in and keystrokes arrive. Marker: `RDP-DESKTOP READY ip=… user=…`.
#
# The VNC viewer's clipboard (when the machine has QEMU's qemu-vdagent on the virtio port
# com.redhat.spice.0): spice-vdagentd on that port and spice-vdagent on an X display of its own (an
# Xvnc :5 with no listener, the console's clipboard); `clip-set`/`clip-show` use it outside the RDP
# session. The console (tty1, what the VNC viewer shows) signs in with the same credentials; its
# shell is the session terminal's (RDP-TYPED lines), its sign-in `RDP-CONSOLE login user=<name>`.

RDP_PKGS="xrdp tigervnc-standalone-server xterm x11-apps xkb-data libpam-modules openssl xclip spice-vdagent"
for p in $RDP_PKGS; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    if [ "$(id -u)" != 0 ]; then echo "the RDP guest needs the Debian packages: $RDP_PKGS (missing $p)" >&2; exit 1; fi
    t "installing $p"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends "$p" >/dev/null
  fi
done

# a file from this machine into the root at the same path (symlinks followed)
put() { mkdir -p "$R$(dirname "$1")"; cp -L "$1" "$R$1"; }
# a program or library with every library it needs
put_elf() {
  put "$1"
  for l in $(ldd "$1" 2>/dev/null | grep -o '/[^ ]*'); do [ -e "$R$l" ] || put "$l"; done
}

ARCH_LIB=/usr/lib/x86_64-linux-gnu
for b in /usr/sbin/xrdp /usr/sbin/xrdp-sesman /usr/sbin/xrdp-chansrv /usr/bin/xrdp-keygen \
         /usr/bin/Xvnc /usr/bin/xkbcomp /usr/bin/xauth /usr/bin/xterm /usr/bin/xclock /usr/bin/openssl /usr/bin/xclip \
         /usr/bin/spice-vdagent /usr/sbin/spice-vdagentd; do
  put_elf "$b"
done
# what xrdp and PAM load at run time
for l in "$ARCH_LIB"/xrdp/*.so* "$ARCH_LIB"/security/pam_unix.so "$ARCH_LIB"/security/pam_permit.so; do
  [ -e "$l" ] && put_elf "$l"
done
[ -e /usr/sbin/unix_chkpwd ] && put_elf /usr/sbin/unix_chkpwd
# the virtio port of the clipboard agent (virtio_console), loaded with the base modules
for ko in $(modprobe -d "$WORK/x" -S "$KV" --show-depends virtio_console | awk '$1=="insmod"{print $2}'); do
  rel=${ko#"$WORK/x/lib/modules/$KV/"}
  grep -qxF "$rel" "$R/etc/modules.order" && continue
  mkdir -p "$R/lib/modules/$(dirname "$rel")"; cp "$ko" "$R/lib/modules/$rel"; echo "$rel" >> "$R/etc/modules.order"
done
# Debian's ld.so looks in the multiarch directories without a cache; /lib is a real directory here.
mkdir -p "$R/lib/x86_64-linux-gnu" "$R/usr/lib/x86_64-linux-gnu"
if [ -d "$R/usr/lib/x86_64-linux-gnu/security" ] && [ ! -e "$R/lib/x86_64-linux-gnu/security" ]; then
  ln -s /usr/lib/x86_64-linux-gnu/security "$R/lib/x86_64-linux-gnu/security"
fi

# data: xrdp's files, the keyboard maps Xvnc compiles with xkbcomp, xterm's resources
mkdir -p "$R/etc/xrdp" "$R/usr/share/xrdp" "$R/usr/share/X11" "$R/var/lib/xkb" "$R/var/run/xrdp" "$R/etc/X11/app-defaults"
cp /etc/xrdp/km-*.ini /etc/xrdp/xrdp_keyboard.ini "$R/etc/xrdp/"
cp -r /usr/share/xrdp/. "$R/usr/share/xrdp/"
cp -r /usr/share/X11/xkb "$R/usr/share/X11/"
cp /etc/X11/app-defaults/XTerm /etc/X11/app-defaults/XClock "$R/etc/X11/app-defaults/" 2>/dev/null || true
[ -d /usr/share/X11/locale ] && cp -r /usr/share/X11/locale "$R/usr/share/X11/"

put /etc/ssl/openssl.cnf; mkdir -p "$R/usr/lib/ssl"; ln -sf /etc/ssl/openssl.cnf "$R/usr/lib/ssl/openssl.cnf"
chmod 1777 "$R/var/lib/xkb"

# Uncompressed, uncached bitmaps: the portal's browser viewer (IronRDP) draws xrdp's padded bitmaps sheared, and its
# proxy can crop only uncompressed bitmap updates (server/src/rdp/bitmap-fix.ts).
sed -e 's/^autorun=.*/autorun=Xvnc/' -e 's/^security_layer=.*/security_layer=tls/' -e 's/^EnableSyslog=.*/EnableSyslog=false/' \
    -e 's/^bitmap_compression=.*/bitmap_compression=false/' -e 's/^bitmap_cache=.*/bitmap_cache=false/' \
    -e 's#^certificate=.*#certificate=/etc/xrdp/cert.pem#' -e 's#^key_file=.*#key_file=/etc/xrdp/key.pem#' \
    /etc/xrdp/xrdp.ini > "$R/etc/xrdp/xrdp.ini"
sed -e 's/^EnableSyslog=.*/EnableSyslog=false/' -e 's/^AllowRootLogin=.*/AllowRootLogin=false/' /etc/xrdp/sesman.ini > "$R/etc/xrdp/sesman.ini"

cat > "$R/etc/xrdp/startwm.sh" <<'EOF'
#!/bin/sh
# The session: a clock and a terminal (no window manager: nothing to configure, nothing heavy).
export LANG=C
echo "SESSION started user=$(id -un)" >> /run/rdp-events
xclock -geometry 160x160-20+20 &
# The session lasts as long as its terminal; how it ended is told on the serial console (RDP-SESSION ended).
xterm -geometry 100x30+20+20 -title "Debian desktop" -e /usr/local/bin/rdp-shell 2>/tmp/xterm.err
echo "SESSION ended status=$? $(head -c 200 /tmp/xterm.err | tr '\n' ' ')" >> /run/rdp-events
EOF
cp "$R/etc/xrdp/startwm.sh" "$R/etc/xrdp/reconnectwm.sh"
printf '#!/bin/sh\nexit 0\n' > "$R/etc/xrdp/reconnectwm.sh"
mkdir -p "$R/usr/local/bin"
cat > "$R/usr/local/bin/rdp-shell" <<'EOF'
#!/bin/sh
# A line at a time: each line typed is copied to /run/rdp-events (init prints it on the serial
# console as RDP-TYPED <line>) and then run by the shell.
echo "Debian desktop (RDP) - $(id -un)@$(hostname)"
while printf '$ ' && IFS= read -r line; do
  printf 'TYPED %s\n' "$line" >> /run/rdp-events
  sh -c "$line"
done
EOF
# The session's clipboard (xrdp-chansrv carries it to and from the RDP client), for tests and people:
# `clip-set <text>` owns the clipboard with the text; `clip-show` tells the clipboard's text on the
# serial console (RDP-CLIP <text>). Plain words to type: no shifted characters needed. Outside the
# RDP session (the console) they use the VNC clipboard's display, :5.
cat > "$R/usr/local/bin/clip-set" <<'EOF'
#!/bin/sh
export DISPLAY=${DISPLAY:-:5}
printf '%s' "$*" | xclip -selection clipboard -loops 0 >/dev/null 2>&1 &
EOF
cat > "$R/usr/local/bin/clip-show" <<'EOF'
#!/bin/sh
export DISPLAY=${DISPLAY:-:5}
printf 'CLIP %s\n' "$(xclip -o -selection clipboard 2>/dev/null | head -c 500 | tr '\n' ' ')" >> /run/rdp-events
EOF
# The console's sign-in (tty1): told on the serial console, then the session terminal's line shell.
cat > "$R/etc/profile" <<'EOF'
export PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin
if [ "$(tty)" = /dev/tty1 ]; then
  echo "CONSOLE login user=$(id -un)" >> /run/rdp-events
  exec /usr/local/bin/rdp-shell
fi
EOF
chmod 755 "$R/etc/xrdp/startwm.sh" "$R/etc/xrdp/reconnectwm.sh" "$R/usr/local/bin/rdp-shell" "$R/usr/local/bin/clip-set" "$R/usr/local/bin/clip-show"

# TLS only (security_layer=tls): the RSA keys of RDP's old standard security are never used, but
# xrdp wants the file.
xrdp-keygen xrdp "$R/etc/xrdp/rsakeys.ini" >/dev/null
chmod 600 "$R/etc/xrdp/rsakeys.ini"

# PAM: passwords of /etc/shadow only
mkdir -p "$R/etc/pam.d"
printf 'auth required pam_unix.so nullok\naccount required pam_unix.so\nsession required pam_permit.so\npassword required pam_unix.so sha512\n' > "$R/etc/pam.d/xrdp-sesman"
cp "$R/etc/pam.d/xrdp-sesman" "$R/etc/pam.d/other"
printf 'passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n' > "$R/etc/nsswitch.conf"
# No password anyone knows: root is locked, the demo user is not here; the desktop's own user is made at boot.
printf 'root:x:0:0:root:/root:/bin/sh\n' > "$R/etc/passwd"
printf 'root:*:19000:0:99999:7:::\n' > "$R/etc/shadow"; chmod 600 "$R/etc/shadow"
printf 'root:x:0:\n' > "$R/etc/group"
rm -rf "$R/home/demo"
echo rdp-desktop > "$R/etc/hostname"

cat > "$R/etc/init.d/rcS" <<'EOF'
#!/bin/sh
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev 2>/dev/null
mkdir -p /dev/pts; mount -t devpts devpts /dev/pts; mount -t tmpfs tmp /tmp; mount -t tmpfs run /run
chmod 1777 /tmp
hostname -F /etc/hostname
while read -r m; do insmod /lib/modules/$m 2>/dev/null; done < /etc/modules.order
mdev -s 2>/dev/null
# mdev leaves its nodes root-only (0660): the session's user needs /dev/ptmx (xterm's terminal:
# "get_pty: not enough ptys" and the session ended at once) and the usual world-usable nodes.
chmod 666 /dev/ptmx /dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty 2>/dev/null
ip link set lo up
# every NIC asks for an address (the private one's lease is what the portal reads)
IP=none
for N in $(ls /sys/class/net | grep -v '^lo$'); do
  # (in the background after a few seconds without a lease: it keeps asking)
  udhcpc -i "$N" -s /etc/udhcpc.sh -t 5 -T 1 -A 2 -b -q >/dev/null 2>&1
done
IP=$(ip -4 -o addr show scope global | awk '{print $4}' | tr '\n' ' ')

echo "RDP-DESKTOP network up=$(cut -d' ' -f1 /proc/uptime)" > /dev/ttyS0 2>/dev/null
# the desktop's guest credentials (fw_cfg), else the defaults
U=isard; P=pirineus
C=/sys/firmware/qemu_fw_cfg/by_name/opt/org.vdiportal/credentials/raw
if [ -r "$C" ]; then
  CU=$(sed -n 1p "$C" | base64 -d 2>/dev/null); CP=$(sed -n 2p "$C" | base64 -d 2>/dev/null)
  if echo "$CU" | grep -Eq '^[a-z_][a-z0-9_.-]{0,31}$' && [ -n "$CP" ]; then U=$CU; P=$CP; fi
fi
H=$(printf '%s' "$P" | openssl passwd -6 -stdin)
unset CP P
if ! grep -q "^$U:" /etc/passwd; then
  N=$((2000 + $(wc -l < /etc/passwd)))
  echo "$U:x:$N:$N:$U:/home/$U:/bin/sh" >> /etc/passwd
  echo "$U:x:$N:" >> /etc/group
  echo "$U:!:19000:0:99999:7:::" >> /etc/shadow
  mkdir -p "/home/$U"; chown "$N:$N" "/home/$U"; chmod 700 "/home/$U"
fi
awk -F: -v u="$U" -v h="$H" 'BEGIN{OFS=":"} $1==u{$2=h} {print}' /etc/shadow > /etc/shadow.new && mv /etc/shadow.new /etc/shadow
chmod 600 /etc/shadow
unset H

# xrdp's keys: made once per desktop, kept on its disk (DEMOBOOT partition)
D=""
for i in 1 2 3 4 5; do D=$(findfs LABEL=DEMOBOOT 2>/dev/null) && break; D=""; sleep 0.2; done
[ -n "$D" ] && mount -o rw "$D" /data 2>/dev/null
K=/data/xrdp; grep -q ' /data ' /proc/mounts || K=/run/xrdp-keys
mkdir -p "$K"
if [ ! -s "$K/key.pem" ] || [ ! -s "$K/cert.pem" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=$(hostname)" -keyout "$K/key.pem" -out "$K/cert.pem" >/dev/null 2>&1
  sync
fi
cp "$K/key.pem" "$K/cert.pem" /etc/xrdp/
chmod 600 /etc/xrdp/key.pem

mkdir -p /var/run/xrdp /var/log /tmp/.X11-unix; chmod 1777 /tmp/.X11-unix
: > /run/rdp-events; chmod 622 /run/rdp-events
( tail -F /run/rdp-events 2>/dev/null | while IFS= read -r l; do echo "RDP-$l" > /dev/ttyS0; done ) &
xrdp-sesman
xrdp
# The VNC viewer's clipboard: QEMU's qemu-vdagent on the virtio port com.redhat.spice.0 (mdev makes
# no /dev/virtio-ports names: made here) <-> spice-vdagentd <-> spice-vdagent on the X display :5
# (Xvnc with no listener: nothing to connect to from outside; local clients only). In the background:
# RDP's readiness does not wait for it.
mkdir -p /dev/virtio-ports
for p in /sys/class/virtio-ports/*; do
  [ -r "$p/name" ] && ln -sf "/dev/${p##*/}" "/dev/virtio-ports/$(cat "$p/name")"
done
[ -e /dev/virtio-ports/com.redhat.spice.0 ] && (
  Xvnc :5 -rfbport -1 -SecurityTypes None -nolisten tcp -geometry 1024x768 -depth 24 >/run/xvnc-clipboard.log 2>&1 &
  for i in $(seq 1 100); do [ -S /tmp/.X11-unix/X5 ] && break; sleep 0.2; done
  mkdir -p /run/spice-vdagentd
  # -X: no logind or ConsoleKit here (the agent is the active session); -f -u /dev/null: no uinput (QEMU's mouse=off)
  ( spice-vdagentd -x -X -f -u /dev/null 2>/run/spice-vdagentd.log
    echo "CLIPBOARD-AGENT daemon ended $(tail -c 300 /run/spice-vdagentd.log | tr '\n' ' ')" >> /run/rdp-events ) &
  for i in $(seq 1 100); do [ -S /run/spice-vdagentd/spice-vdagent-sock ] && break; sleep 0.2; done
  # (its X display from DISPLAY: the agent opens it with XOpenDisplay, --display is GTK's alone); again if it ends
  ( for i in 1 2 3 4 5; do
      DISPLAY=:5 NO_AT_BRIDGE=1 spice-vdagent -x 2>/run/spice-vdagent.log
      echo "CLIPBOARD-AGENT session ended $(tail -c 300 /run/spice-vdagent.log | tr '\n' ' ')" >> /run/rdp-events
      sleep 2
    done ) &
  # Said once the session agent is connected to the daemon (its socket has a peer in /proc/net/unix): a viewer
  # connected from then on has the clipboard.
  for i in $(seq 1 300); do [ "$(grep -c spice-vdagent-sock /proc/net/unix)" -ge 2 ] && break; sleep 0.2; done
  echo "CLIPBOARD-AGENT started display=:5" >> /run/rdp-events
) &
acpid -c /etc/acpi 2>/dev/null
printf "\033c" > /dev/tty1
cat > /etc/issue <<EOI

  Debian desktop (RDP)   host: \n   ip: $IP
  RDP on port 3389 (xrdp) for user $U

EOI
for i in $(seq 1 50); do netstat -ltn 2>/dev/null | grep -q ':3389 ' && break; sleep 0.2; done
echo "RDP-DESKTOP READY ip=$IP user=$U uptime=$(cut -d' ' -f1 /proc/uptime)" > /dev/ttyS0 2>/dev/null
EOF
cat > "$R/etc/init.d/rcK" <<'EOF'
#!/bin/sh
echo "RDP-DESKTOP SHUTDOWN" > /dev/ttyS0 2>/dev/null
killall xrdp xrdp-sesman spice-vdagent spice-vdagentd Xvnc 2>/dev/null; sync; umount /data 2>/dev/null
EOF
chmod 755 "$R/etc/init.d/rcS" "$R/etc/init.d/rcK"
rm -f "$R/www/index.html"
