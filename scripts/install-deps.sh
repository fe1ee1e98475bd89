#!/usr/bin/env bash
# Installs what scalebench needs from Debian 12 packages (run as root; no other network).
#   install-deps.sh            everything: the product and the test suite (scripts/test.sh)
#   install-deps.sh --product  the product alone: what `scalebench` and `scalebench-train` run
#                              (scripts/quickstart.sh); no test tools, PyTorch, Slurm, TeX, Chromium
# CUDA, cuDNN and NCCL are not Debian packages: when /usr/local/cuda has them, the CUDA backend
# is built too; without them the CPU-only build is complete.
set -euo pipefail

product=(
  build-essential cmake ccache pkg-config
  libboost-dev libboost-filesystem-dev   # Boost.Process, Boost.Asio, Boost.Math (headers), Boost.Filesystem
  libsqlite3-dev sqlite3
  libfmt-dev nlohmann-json3-dev libcli11-dev
  libre2-dev                             # users' line patterns, matched in linear time
  libopenmpi-dev openmpi-bin
  libdnnl-dev ocl-icd-opencl-dev zlib1g-dev   # dnnl-config.cmake calls find_package(OpenCL): only a Recommends
  gnuplot-nox                            # scalebench plot renders through gnuplot
  dataset-fashion-mnist                  # the quickstart's data
  iproute2 util-linux                    # scalebench cluster: ip netns, bridge, veth, tc; unshare --uts
)
tests=(
  doctest-dev
  clang-format-14                        # the format gate (scripts/check-format.sh), pinned to 14
  python3-torch python3-torchvision      # examples/torch_ddp_train.py: the second framework, the PyTorch peers in bench/
  slurm-wlm munge                        # tests/slurm/test_slurm.sh and `cluster up --slurm`: real Slurm
  texlive-latex-recommended              # tests compile `report --format latex` (booktabs, graphicx)
  texlive-luatex fonts-wqy-microhei      # tests compile `paper`'s main.tex: LuaLaTeX (fontspec), a CJK fallback font
  chromium                               # tests render `report --format html` headless and read its pixels
)
case "${1:-}" in
  --product) packages=("${product[@]}") ;;
  "") packages=("${product[@]}" "${tests[@]}") ;;
  *) echo "usage: install-deps.sh [--product]" >&2; exit 2 ;;
esac

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "scalebench: all Debian packages already installed"
  exit 0
fi
echo "scalebench: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
