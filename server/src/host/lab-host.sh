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
if [ "$accel" = tcg ] && [ -e /dev/kvm ]; then mount --bind /dev/null /dev/kvm; fi
hostname "$name"
/usr/sbin/libvirtd &
/usr/sbin/sshd -D -e -f "$dir/ssh/sshd_config" &
# As the namespace's first process: waits on both (and reaps what ends).
wait
