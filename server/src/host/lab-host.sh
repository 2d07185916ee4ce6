# One simulated host of the lab (lab.ts): run by `ip netns exec <its namespace> unshare --mount --uts
# --pid --fork --mount-proc` as the first process of its own PID namespace, so that ending it ends
# everything the host runs. In this host's one mount namespace its own folders stand over libvirt's
# paths, then its own libvirtd and its own sshd start: a `qemu+ssh://` session's virt-ssh-helper
# reaches this libvirtd's socket. Arguments: the host's folder, its name, `kvm` or `tcg` (this machine's
# /dev/kvm hidden from the host: its libvirtd then offers TCG only).
set -eu
dir="$1"
name="$2"
accel="${3:-tcg}"
mount --make-rprivate /
# A /run of its own: sshd's privilege separation folder and libvirt's sockets, nothing of the machine's.
mount -t tmpfs -o mode=0755 vdilab-run /run
mkdir -p /run/libvirt /run/sshd
mount --bind "$dir/run" /run/libvirt
mount --bind "$dir/lib" /var/lib/libvirt
mount --bind "$dir/etc" /etc/libvirt
mount --bind "$dir/log" /var/log/libvirt
mount --bind "$dir/cache" /var/cache/libvirt
# TCG: an empty read-only file stands over /dev/kvm (root may not open it for writing), so libvirtd finds
# KVM unusable and offers TCG only. (A writable stand-in such as /dev/null: libvirtd sees KVM usable but
# its probe without it, and probes QEMU again at every domain start, ~15 s each, measured.)
if [ "$accel" = tcg ] && [ -e /dev/kvm ]; then
  : > "$dir/no-kvm"
  mount --bind "$dir/no-kvm" /dev/kvm
  mount -o remount,bind,ro /dev/kvm
fi
# A home of its own for root, as another machine has: sshd's sessions (libvirt's virt-ssh-helper) run root's
# shell, which would otherwise read this machine's root dotfiles (a shell set-up that took 0.5 s, and 60 s while
# another session had left its lock behind, per connection). The keys sshd accepts are in its own folder.
mkdir -p "$dir/home"
mount --bind "$dir/home" /root
hostname "$name"
# Its name in its own /etc/hosts, as a Debian host has it: libvirtd looks its host name up at every
# domain start, and the lab's namespaces reach no DNS server.
printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\tlocalhost ip6-localhost ip6-loopback\n' "$name" > "$dir/hosts"
mount --bind "$dir/hosts" /etc/hosts
# With a certificate (lab.ts `tls`), it listens for qemu+tls:// too.
if [ -f "$dir/etc/pki/servercert.pem" ]; then /usr/sbin/libvirtd --listen & else /usr/sbin/libvirtd & fi
/usr/sbin/sshd -D -e -f "$dir/ssh/sshd_config" &
# As the namespace's first process: waits on both (and reaps what ends).
wait
