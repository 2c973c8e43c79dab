#!/usr/bin/env bash
# Install SLURM and munge (Debian/Ubuntu packages) for tests/test_slurm.py,
# which starts its own one-node cluster from them. Idempotent and quiet:
# does nothing when the binaries are already there. Starts no daemon.
set -euo pipefail

needed=(munged slurmctld slurmd sbatch srun squeue sinfo scancel scontrol)
missing=()
for bin in "${needed[@]}"; do
    PATH="$PATH:/usr/sbin:/sbin" command -v "$bin" >/dev/null 2>&1 || missing+=("$bin")
done
if [ "${#missing[@]}" -eq 0 ]; then
    echo "SLURM and munge already installed: $(PATH="$PATH:/usr/sbin" slurmd -V)"
    exit 0
fi
echo "installing slurm-wlm and munge (missing: ${missing[*]})"

if [ "$(id -u)" -eq 0 ]; then
    sudo=()
elif command -v sudo >/dev/null 2>&1; then
    sudo=(sudo -n)
else
    echo "need root or sudo to apt-get install slurm-wlm munge" >&2
    exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "no apt-get: install SLURM and munge with this system's package manager" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq >/dev/null
"${sudo[@]}" apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
echo "installed: $(PATH="$PATH:/usr/sbin" slurmd -V), $(PATH="$PATH:/usr/sbin" munged --version)"
