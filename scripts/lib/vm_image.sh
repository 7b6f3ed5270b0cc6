#!/bin/sh
# scripts/vm-check's image recipe: mmdebstrap's customize hook, run on the
# host with the new root as $1. Makes a machine that boots on its own from
# /dev/vda with a normal user `desk`, DHCP on qemu's user network, nothing
# periodic competing for the (often emulated) CPU, and one unit that mounts
# the host's 9p share, runs its guest.sh and powers the machine off.
# (Its text is part of the images' cache key: a change builds them anew.)
set -eu
root=$1
echo sagebox-vm >"$root/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tsagebox-vm\n' >"$root/etc/hosts"
echo '/dev/vda / ext4 rw,relatime 0 1' >"$root/etc/fstab"
chroot "$root" passwd -d root >/dev/null
chroot "$root" useradd --create-home --uid 1000 --shell /bin/bash desk
mkdir -p "$root/etc/systemd/network"
printf '[Match]\nName=en*\n\n[Network]\nDHCP=yes\n' >"$root/etc/systemd/network/80-vm.network"
chroot "$root" systemctl enable systemd-networkd >/dev/null 2>&1
rm -f "$root/etc/resolv.conf"
echo 'nameserver 10.0.2.3' >"$root/etc/resolv.conf" # qemu's user network
for u in apt-daily.timer apt-daily-upgrade.timer man-db.timer e2scrub_all.timer fstrim.timer \
	e2scrub_reap.service systemd-networkd-wait-online.service; do
	chroot "$root" systemctl mask "$u" >/dev/null 2>&1
done
# The journal on the guest's disk, written every 15 s: a guest stopped by
# the host after a hang keeps what it logged until shortly before.
mkdir -p "$root/etc/systemd/journald.conf.d" "$root/var/log/journal"
printf '[Journal]\nStorage=persistent\nSyncIntervalSec=15s\n' >"$root/etc/systemd/journald.conf.d/sagebox-vm.conf"
cat >"$root/usr/local/sbin/sagebox-vm-run" <<'RUN'
#!/bin/sh
# Mount the host's share, run its guest.sh, power off.
mkdir -p /mnt/host
if mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 host /mnt/host; then
	date +%s >/mnt/host/booted
	bash /mnt/host/guest.sh >/mnt/host/guest.log 2>&1
	sync
else
	echo "sagebox-vm-run: the host's share did not mount" >/dev/console
fi
systemctl poweroff --no-block
RUN
chmod 0755 "$root/usr/local/sbin/sagebox-vm-run"
cat >"$root/etc/systemd/system/sagebox-vm.service" <<'UNIT'
[Unit]
Description=sagebox's checks from the host's share
After=multi-user.target network.target

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/sagebox-vm-run
TimeoutStartSec=infinity
StandardOutput=journal+console

[Install]
WantedBy=multi-user.target
UNIT
chroot "$root" systemctl enable sagebox-vm.service >/dev/null 2>&1
chroot "$root" apt-get clean
